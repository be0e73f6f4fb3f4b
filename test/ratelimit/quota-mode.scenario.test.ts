import assert from 'node:assert/strict';
import {
  compileDocuments,
  createRateLimitGrpcServer,
  createRateLimitService,
  createRedisStore,
  type RateLimitGrpcServer,
  type RateLimitRequest,
  type RateLimitService,
  type RateLimitStore,
} from '../../src/ratelimit';
import { grpcClients, unary, type Clients } from '../support/grpc-clients';
import { startRedis, type RedisProcess } from '../support/redis';
import { memoryLogger } from '../support/memory-logger';

// 10 s into a minute, fixed: windows never turn during a test.
const T0 = Date.UTC(2024, 0, 1, 0, 0, 10);

/** A tenant's soft quota of 2 a minute, a hard limit of 5 on each backend, and a quota in shadow mode. */
const LIMITS = [
  {
    domain: 'llm',
    descriptors: [
      { key: 'tenant', quota_mode: true, rate_limit: { name: 'tenant-quota', unit: 'minute', requests_per_unit: 2 } },
      { key: 'backend', rate_limit: { name: 'backend', unit: 'minute', requests_per_unit: 5 } },
      { key: 'trial', quota_mode: true, shadow_mode: true, rate_limit: { unit: 'minute', requests_per_unit: 1 } },
      { key: 'free', quota_mode: true, rate_limit: { unlimited: true } },
    ],
  },
];

const one = (key: string, value: string) => ({ entries: [{ key, value }] });

function serviceWith(store?: RateLimitStore): RateLimitService {
  return createRateLimitService({ limits: LIMITS, store, now: () => T0, logger: memoryLogger() });
}

describe('quota mode', () => {
  it('loads quota_mode without a warning', () => {
    const logger = memoryLogger();
    createRateLimitService({ limits: LIMITS, logger });
    assert.deepEqual(
      logger.lines.filter((l) => l.level === 'warn'),
      [],
    );
  });

  it('answers OK past a quota-mode limit, with that descriptor OVER_LIMIT and named in the dynamic metadata', async () => {
    const service = serviceWith();
    const ask = () =>
      service.shouldRateLimit({ domain: 'llm', descriptors: [one('backend', 'b1'), one('tenant', 'acme')] });
    const first = await ask();
    assert.equal(first.overallCode, 'OK');
    assert.deepEqual(first.dynamicMetadata, {
      domain: 'llm',
      descriptors: [{ entries: ['backend=b1'] }, { entries: ['tenant=acme'] }],
      quotaModeEnabled: true,
    });
    await ask();
    const third = await ask();
    assert.equal(third.overallCode, 'OK');
    assert.deepEqual(third.statuses[1], {
      code: 'OVER_LIMIT',
      currentLimit: { name: 'tenant-quota', requestsPerUnit: 2, unit: 'MINUTE' },
      limitRemaining: 0,
      durationUntilResetMs: 50_000,
    });
    assert.deepEqual(third.statuses[0].limitRemaining, 2);
    assert.deepEqual(third.dynamicMetadata, {
      domain: 'llm',
      descriptors: [{ entries: ['backend=b1'] }, { entries: ['tenant=acme'] }],
      quotaModeEnabled: true,
      quotaModeViolations: [1],
    });
  });

  it('still refuses a request over an ordinary limit, counting none of its quotas', async () => {
    const service = serviceWith();
    for (let i = 0; i < 5; i++) await service.shouldRateLimit({ domain: 'llm', descriptors: [one('backend', 'b1')] });
    const refused = await service.shouldRateLimit({
      domain: 'llm',
      descriptors: [one('tenant', 'acme'), one('backend', 'b1')],
    });
    assert.equal(refused.overallCode, 'OVER_LIMIT');
    assert.deepEqual(
      refused.statuses.map((s) => s.code),
      ['OK', 'OVER_LIMIT'],
    );
    assert.deepEqual(refused.dynamicMetadata?.quotaModeViolations, undefined);
    const next = await service.shouldRateLimit({ domain: 'llm', descriptors: [one('tenant', 'acme')] });
    assert.equal(next.statuses[0].limitRemaining, 1);
  });

  it('sends the request hits_addend in the metadata and counts it against the quota', async () => {
    const service = serviceWith();
    const res = await service.shouldRateLimit({ domain: 'llm', hitsAddend: 3, descriptors: [one('tenant', 'acme')] });
    assert.equal(res.overallCode, 'OK');
    assert.deepEqual(res.dynamicMetadata, {
      domain: 'llm',
      descriptors: [{ entries: ['tenant=acme'] }],
      hitsAddend: 3,
      quotaModeEnabled: true,
      quotaModeViolations: [0],
    });
  });

  it('reports no violation of a quota in shadow mode, nor of an unlimited one', async () => {
    const service = serviceWith();
    for (let i = 0; i < 3; i++)
      await service.shouldRateLimit({ domain: 'llm', descriptors: [one('trial', 't'), one('free', 'f')] });
    const res = await service.shouldRateLimit({ domain: 'llm', descriptors: [one('trial', 't'), one('free', 'f')] });
    assert.deepEqual(
      res.statuses.map((s) => s.code),
      ['OK', 'OK'],
    );
    assert.deepEqual(res.dynamicMetadata, {
      domain: 'llm',
      descriptors: [{ entries: ['trial=t'] }, { entries: ['free=f'] }],
      quotaModeEnabled: true,
    });
  });

  it('sends no dynamic metadata when no quota-mode limit applies', async () => {
    const service = serviceWith();
    const res = await service.shouldRateLimit({
      domain: 'llm',
      descriptors: [one('backend', 'b1'), one('free', 'f'), one('other', 'x')],
    });
    assert.equal('dynamicMetadata' in res, false);
  });

  it('takes quota_mode as envoyproxy/ratelimit reads a flag, and refuses a quoted one', () => {
    const rule = (flag: unknown) =>
      compileDocuments([
        {
          domain: 'd',
          descriptors: [{ key: 'k', quota_mode: flag, rate_limit: { unit: 'second', requests_per_unit: 1 } }],
        },
      ]);
    assert.doesNotThrow(() => rule(true));
    assert.throws(() => rule('yes'), /descriptors\[0\]\.quota_mode: must be true or false/);
  });

  describe('over gRPC', () => {
    let server: RateLimitGrpcServer;
    let clients: Clients;

    before(async () => {
      server = createRateLimitGrpcServer(createRateLimitService({ limits: LIMITS, logger: memoryLogger() }), {
        port: 0,
      });
      clients = grpcClients(`127.0.0.1:${await server.start()}`);
    });
    after(async () => {
      clients.close();
      await server.stop();
    });

    it('answers OK with dynamic_metadata naming the descriptors over their quota, as envoyproxy/ratelimit does', async () => {
      const request: RateLimitRequest = { domain: 'llm', descriptors: [one('tenant', 'grpc'), one('backend', 'grpc')] };
      await unary(clients.envoy, 'ShouldRateLimit', request);
      await unary(clients.envoy, 'ShouldRateLimit', request);
      const res = await unary(clients.envoy, 'ShouldRateLimit', request);
      assert.equal(res.overall_code, 'OK');
      assert.deepEqual(
        res.statuses.map((s: { code: string }) => s.code),
        ['OVER_LIMIT', 'OK'],
      );
      const fields = res.dynamic_metadata.fields;
      assert.deepEqual(fields.quotaModeEnabled, { boolValue: true, kind: 'boolValue' });
      assert.deepEqual(fields.quotaModeViolations, {
        listValue: { values: [{ numberValue: 0, kind: 'numberValue' }] },
        kind: 'listValue',
      });
      assert.deepEqual(fields.domain, { stringValue: 'llm', kind: 'stringValue' });
      assert.deepEqual(fields.descriptors.listValue.values[1].structValue.fields.entries.listValue.values, [
        { stringValue: 'backend=grpc', kind: 'stringValue' },
      ]);
    });

    it('answers pb.lyft.ratelimit OK past a quota too', async () => {
      const request = { domain: 'llm', descriptors: [one('tenant', 'lyft')] };
      for (let i = 0; i < 2; i++) await unary(clients.lyft, 'ShouldRateLimit', request);
      const res = await unary(clients.lyft, 'ShouldRateLimit', request);
      assert.equal(res.overall_code, 'OK');
      assert.equal(res.statuses[0].code, 'OVER_LIMIT');
    });
  });

  describe('with Redis', function () {
    let redis: RedisProcess;

    before(async () => {
      redis = await startRedis();
    });
    after(async () => {
      await redis.stop();
    });

    it('lets requests past the quota through and keeps counting them', async () => {
      const store = createRedisStore({ url: redis.url });
      try {
        await store.ready();
        const service = serviceWith(store);
        const codes: string[] = [];
        for (let i = 0; i < 4; i++)
          codes.push(
            (await service.shouldRateLimit({ domain: 'llm', descriptors: [one('tenant', 'redis')] })).overallCode,
          );
        assert.deepEqual(codes, ['OK', 'OK', 'OK', 'OK']);
        const keys = await redis.client.keys('*tenant_redis*');
        assert.equal(keys.length, 1);
        assert.equal(await redis.client.get(keys[0]), '4');
      } finally {
        await store.close();
      }
    });
  });
});
