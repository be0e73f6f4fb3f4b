import assert from 'node:assert/strict';
import request from 'supertest';
import type { Middleware } from 'koa';
import { createGateway, createRateLimitStage, type Gateway, type GatewayEvents } from '../../src/gateway';
import { close, listen } from '../support/server';
import { configOf, mapping } from '../support/records';
import { freePort } from '../support/ports';
import { echoModule, registry } from '../support/modules';

/** Events as a list of words, in the order they came. */
function recorder(): { events: GatewayEvents; seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    events: {
      authDecision: (outcome) => seen.push(`auth ${outcome}`),
      rateLimitDecision: (outcome) => seen.push(`ratelimit ${outcome}`),
      upstreamError: (route, failure) => seen.push(`upstream ${route} ${failure}`),
    },
  };
}

const labels = { gateway: [{ request_label_group: [{ client: { header: 'x-client' } }] }] };

describe('gateway events', function () {
  let gateway: Gateway | undefined;

  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it('reports an auth service that does not answer as an error, whatever the failure mode makes of it', async () => {
    const dead = await freePort();
    for (const [allow, status] of [
      [false, 403],
      [true, 200],
    ] as const) {
      const { events, seen } = recorder();
      gateway = createGateway({
        config: configOf(
          {
            apiVersion: 'gateway/v1',
            kind: 'AuthService',
            name: 'a',
            auth_service: `127.0.0.1:${dead}`,
            timeout_ms: 2000,
            failure_mode_allow: allow,
          },
          mapping('/echo/', 'echo'),
        ),
        modules: registry(echoModule('echo')),
        events,
      });
      await request(gateway.app.callback()).get('/echo/x').expect(status);
      assert.deepEqual(seen, ['auth error']);
      await gateway.close();
    }
  });

  it('reports a rate-limit service that does not answer as an error, and asks it nothing without descriptors', async () => {
    const dead = await freePort();
    const { events, seen } = recorder();
    gateway = createGateway({
      config: configOf(
        {
          apiVersion: 'gateway/v1',
          kind: 'RateLimitService',
          name: 'r',
          service: `127.0.0.1:${dead}`,
          timeout_ms: 500,
        },
        mapping('/echo/', 'echo', { labels }),
      ),
      modules: registry(echoModule('echo')),
      events,
      // The stage as the gateway builds it, with its warning kept out of the test's output.
      stages: {
        rateLimit: (record, modules, e) =>
          createRateLimitStage(record, modules, { ...e, logger: { warn: () => undefined } }),
      },
    });
    const app = gateway.app.callback();
    await request(app).get('/echo/x').expect(200);
    assert.deepEqual(seen, []);
    await request(app).get('/echo/x').set('X-Client', 'c1').expect(200);
    assert.deepEqual(seen, ['ratelimit error']);
  });

  it('reports nothing for a client that leaves before the upstream answers', async () => {
    const { events, seen } = recorder();
    const held = await listen(() => undefined);
    gateway = createGateway({ config: configOf(mapping('/held/', held.url, { name: 'held' })), events });
    let handled!: () => void;
    const done = new Promise<void>((resolve) => (handled = resolve));
    const last: Middleware = async (_ctx, next) => {
      try {
        await next();
      } finally {
        handled();
      }
    };
    gateway.app.middleware.unshift(last);
    const served = await listen(gateway.app.callback());
    try {
      await assert.rejects(request(served.url).get('/held/x').timeout(300));
      // The gateway has given up on the upstream (its timeout is 3 s): because the client left.
      await done;
      assert.deepEqual(seen, []);
    } finally {
      await close(served.server);
      await close(held.server);
    }
  });
});
