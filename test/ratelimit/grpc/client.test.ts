import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {
  createRateLimitClient,
  createRateLimitGrpcServer,
  createRateLimitService,
  RateLimitCallError,
  type RateLimitClient,
  type RateLimitGrpcServer,
  type RateLimitService,
} from '../../../src/ratelimit';
import { performance } from 'node:perf_hooks';
import { grpcClients, unary } from '../../support/grpc-clients';
import { freePort } from '../../support/ports';
import { memoryLogger } from '../../support/memory-logger';
import { startSlowServer } from '../../support/slow-ratelimit-server';
import { NO_BOUND_MS } from '../../support/polling';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'envoy-config');

describe('rate-limit gRPC client', () => {
  let service: RateLimitService;
  let server: RateLimitGrpcServer;
  let client: RateLimitClient;

  before(async () => {
    service = createRateLimitService({ limitsDir: FIXTURE, logger: memoryLogger() });
    server = createRateLimitGrpcServer(service, { port: 0 });
    client = createRateLimitClient(`127.0.0.1:${await server.start()}`, { timeoutMs: NO_BOUND_MS });
  });
  after(async () => {
    client.close();
    await server.stop();
  });

  it('gives the same answer over gRPC as the service in-process', async () => {
    const req = (to: string) => ({
      domain: 'messaging',
      descriptors: [
        {
          entries: [
            { key: 'message_type', value: 'marketing' },
            { key: 'to_number', value: to },
          ],
        },
        { entries: [{ key: 'ldap', value: 'x' }] },
        { entries: [{ key: 'unknown', value: 'x' }] },
      ],
    });
    const remote = await client.shouldRateLimit(req('1'));
    const local = await service.shouldRateLimit(req('2'));
    // The reset is reported in milliseconds both ways, in whole seconds: a second may tick between the two calls.
    assert.ok(Math.abs(remote.statuses[0].durationUntilResetMs! - local.statuses[0].durationUntilResetMs!) <= 1000);
    remote.statuses[0].durationUntilResetMs = local.statuses[0].durationUntilResetMs;
    assert.deepEqual(remote, local);
  });

  it('sends overrides and hits, and reads named limits back', async () => {
    const res = await client.shouldRateLimit({
      domain: 'messaging',
      hitsAddend: 2,
      descriptors: [
        {
          entries: [
            { key: 'client', value: 'c' },
            { key: 'path', value: '/admin' },
          ],
        },
        { entries: [{ key: 'k', value: 'v' }], limit: { requestsPerUnit: 3, unit: 'YEAR' }, hitsAddend: 0 },
      ],
    });
    assert.deepEqual(res.statuses[0].currentLimit, { name: 'admin-path', requestsPerUnit: 1, unit: 'MINUTE' });
    assert.equal(res.statuses[0].code, 'OK');
    assert.deepEqual(res.statuses[1].currentLimit, { requestsPerUnit: 3, unit: 'YEAR' });
    assert.equal(res.statuses[1].limitRemaining, 3);
  });

  it('rejects an empty domain with INVALID_ARGUMENT', async () => {
    await assert.rejects(
      client.shouldRateLimit({ domain: '', descriptors: [] }),
      (err: RateLimitCallError) => err.code === grpc.status.INVALID_ARGUMENT,
    );
  });

  it('fails fast when nothing listens at the address', async () => {
    // A deadline longer than the test: UNAVAILABLE, not DEADLINE_EXCEEDED, is the refused connection.
    const dead = createRateLimitClient(`127.0.0.1:${await freePort()}`, { timeoutMs: 600_000 });
    try {
      await assert.rejects(
        dead.shouldRateLimit({ domain: 'd', descriptors: [] }),
        (err: RateLimitCallError) => err.code === grpc.status.UNAVAILABLE,
      );
    } finally {
      dead.close();
    }
  });

  it('gives up at the deadline when the service is slow', async () => {
    const slow = await startSlowServer();
    const c = createRateLimitClient(`127.0.0.1:${slow.port}`, { timeoutMs: 200 });
    try {
      // The server holds every call for good: only the deadline ends it.
      await assert.rejects(
        c.shouldRateLimit({ domain: 'd', descriptors: [] }),
        (err: RateLimitCallError) => err.code === grpc.status.DEADLINE_EXCEEDED,
      );
      assert.equal(slow.calls, 1);
    } finally {
      c.close();
      await slow.stop();
    }
  });

  it('keeps trying to reconnect every moment however long the service is away, and answers once it is back', async function () {
    const ports = { ours: await freePort(), plain: await freePort() };
    const req = { domain: 'messaging', descriptors: [{ entries: [{ key: 'ldap', value: 'x' }] }] };
    const serveOn = async (port: number) => {
      const up = createRateLimitGrpcServer(service, { port });
      await up.start();
      return up;
    };
    let ups = [await serveOn(ports.ours), await serveOn(ports.plain)];
    const c = createRateLimitClient(`127.0.0.1:${ports.ours}`, { timeoutMs: 200 });
    // The yardstick, beside it under the same load: a grpc-js client as it comes, whose reconnection backs off to minutes.
    const plain = grpcClients(`127.0.0.1:${ports.plain}`);
    const asPlain = () => unary(plain.envoy, 'ShouldRateLimit', req, 200);
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // While away, each port takes connections and drops them at once: what is counted is how often each client tries.
    const tries = { ours: 0, plain: 0 };
    const away: net.Server[] = [];
    try {
      await Promise.all([c.shouldRateLimit(req), asPlain()]);
      await Promise.all(ups.map((up) => up.stop()));
      for (const which of ['ours', 'plain'] as const) {
        const server = net.createServer((socket) => {
          tries[which]++;
          socket.destroy();
        });
        away.push(server);
        await new Promise<void>((resolve) => server.listen(ports[which], '127.0.0.1', resolve));
      }
      // Gateways keep asking while it is away: each failed call must not push the next try further off.
      const awayUntil = performance.now() + 6_400;
      while (performance.now() < awayUntil) {
        await Promise.all([c.shouldRateLimit(req).catch(() => undefined), asPlain().catch(() => undefined)]);
        await pause(50);
      }
      await Promise.all(away.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
      assert.ok(
        tries.ours >= 2 * tries.plain,
        `tried ${tries.ours} times while away; a client with grpc-js's own backoff ${tries.plain} times`,
      );
      ups = [await serveOn(ports.ours)];
      while (
        !(await c.shouldRateLimit(req).then(
          () => true,
          () => false,
        ))
      )
        await pause(50);
    } finally {
      c.close();
      plain.close();
      for (const server of away) server.close();
      await Promise.all(ups.map((up) => up.stop()));
    }
  });
});
