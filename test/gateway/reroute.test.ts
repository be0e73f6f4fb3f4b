/**
 * The route chosen again once the auth service edited the request, as
 * Emissary has Envoy clear its route cache after ext_authz: through the
 * gateway to a real upstream, with a real gRPC ext_authz service and a
 * real HTTP auth service, and the rate-limit labels of the route chosen.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { createAuthStage } from '../../src/gateway/stages/auth-stage';
import { createRateLimitStage } from '../../src/gateway/stages/ratelimit-stage';
import { memoryLogger } from '../support/memory-logger';
import { startExtAuthzServer, type ExtAuthzServer } from '../support/ext-authz-server';
import { startRateLimitAnswerServer, type RateLimitAnswerServer } from '../support/ratelimit-answer-server';
import { close, listen } from '../support/server';
import { configOf, mapping } from '../support/records';
import { configRig, type Rig } from '../support/routing-rig';
import { emissaryRig, FORMS, routeTo, written } from '../support/emissary';

/** The Mappings of the tests: `/plans/` for everyone, a gold one chosen by a header the auth service sets. */
function plans(up: string): Record<string, unknown>[] {
  return [
    mapping('/plans/', up, {
      name: 'plans',
      add_request_headers: { 'X-Route': 'plans' },
      labels: { shop: [{ plans: [{ generic_key: 'basic' }] }] },
    }),
    mapping('/plans/', up, {
      name: 'gold',
      headers: { 'x-tier': 'gold' },
      add_request_headers: { 'X-Route': 'gold' },
      labels: {
        shop: [{ plans: [{ generic_key: 'gold' }, { request_headers: { key: 'tier', header_name: 'x-tier' } }] }],
      },
    }),
    mapping('/beta/', up, { name: 'beta', headers: { 'x-beta': true }, add_request_headers: { 'X-Route': 'beta' } }),
  ];
}

describe('the route, chosen again after a gRPC ext_authz service edited the request', () => {
  let authz: ExtAuthzServer;
  let rls: RateLimitAnswerServer;
  let rig: Rig;

  before(async () => {
    authz = await startExtAuthzServer();
    rls = await startRateLimitAnswerServer();
    rig = await configRig(
      (up) =>
        configOf(
          ...plans(up),
          { apiVersion: 'gateway/v1', kind: 'AuthService', name: 'authz', auth_service: authz.address, proto: 'grpc' },
          { apiVersion: 'gateway/v1', kind: 'RateLimitService', name: 'rls', service: rls.address, domain: 'shop' },
        ),
      {
        stages: {
          auth: (record, modules) => createAuthStage(record, modules, { logger: memoryLogger() }),
          rateLimit: (record, modules, settings) =>
            createRateLimitStage(record, modules, { ...settings, logger: memoryLogger() }),
        },
      },
    );
  });
  after(async () => {
    await rig?.close();
    await authz?.close();
    await rls?.close();
  });

  it("sends the request to the Mapping the answer's header chooses, limited by that Mapping's labels", async () => {
    authz.answer = () => ({
      status: { code: 0 },
      ok_response: { headers: [{ header: { key: 'x-tier', value: 'gold' } }] },
    });
    const res = await rig.call('/plans/42');
    assert.deepEqual([res.status, res.route, res.received?.headers['x-tier']], [200, 'gold', 'gold']);
    // The header the auth service set is read by the labels too, as Emissary documents (auth runs first).
    assert.deepEqual(rls.received.at(-1)?.descriptors[0].entries, [
      { key: 'generic_key', value: 'gold' },
      { key: 'tier', value: 'gold' },
    ]);
  });

  it('keeps the route of a request the answer leaves as it was', async () => {
    authz.answer = () => ({ status: { code: 0 } });
    const res = await rig.call('/plans/42', { headers: { 'X-Tier': 'gold' } });
    assert.equal(res.route, 'gold');
    assert.equal((await rig.call('/plans/42')).route, 'plans');
  });

  it('answers 404 when the edited request matches no Mapping, and never calls the upstream', async () => {
    authz.answer = () => ({ status: { code: 0 }, ok_response: { headers_to_remove: ['x-beta'] } });
    const res = await rig.call('/beta/x', { headers: { 'X-Beta': 'yes' } });
    assert.deepEqual([res.status, res.received], [404, undefined]);
  });
});

/** The tier the HTTP auth service names; none when undefined. */
const authAnswer: { tier?: string } = { tier: 'gold' };

for (const form of FORMS) {
  describe(`the route, chosen again after an HTTP auth service set a header, in Emissary's ${form === 'resource' ? 'resources' : 'annotation'}`, () => {
    let auth: { server: http.Server; url: string };
    let rig: Rig;
    before(async () => {
      auth = await listen((_req, res) => {
        if (authAnswer.tier !== undefined) res.setHeader('X-Tier', authAnswer.tier);
        res.end();
      });
      const authAddress = auth.url.slice('http://'.length);
      rig = await emissaryRig((up) =>
        written(
          form,
          routeTo(up, 'plans', { prefix: '/plans/' }),
          routeTo(up, 'gold', { prefix: '/plans/', headers: { 'x-tier': 'gold' } }),
          {
            kind: 'AuthService',
            name: 'auth',
            spec: { auth_service: authAddress, allowed_authorization_headers: ['x-tier'] },
          },
        ),
      );
    });
    after(async () => {
      await rig?.close();
      await close(auth?.server);
    });

    it('sends the request to the Mapping of the header the auth service allowed onto it', async () => {
      const res = await rig.call('/plans/1');
      assert.deepEqual([res.status, res.route], [200, 'gold']);
    });

    it("routes a client's own copy of the header, which never reaches the upstream, by what the auth service says", async () => {
      authAnswer.tier = undefined;
      try {
        const res = await rig.call('/plans/1', { headers: { 'X-Tier': 'gold' } });
        assert.deepEqual([res.status, res.route, res.received?.headers['x-tier']], [200, 'plans', undefined]);
      } finally {
        authAnswer.tier = 'gold';
      }
    });
  });
}
