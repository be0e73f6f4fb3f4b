import assert from 'node:assert/strict';
import request from 'supertest';
import { createRateLimitStage } from '../../../../src/gateway/stages/ratelimit-stage';
import {
  createRateLimitService,
  createRedisStore,
  type RateLimitService,
  type RateLimitStore,
  type RedisStore,
} from '../../../../src/ratelimit';
import { holdEventLoopUntil, startRedis, type RedisProcess } from '../../../support/redis';
import { memoryLogger } from '../../../support/memory-logger';
import { labelledMappingRecord, rateLimitRecord } from '../../../support/records';
import { NO_BOUND_MS } from '../../../support/polling';
import { stageApp } from '../../../support/stage-app';

const LIMITS = [
  { domain: 'gateway', descriptors: [{ key: 'user', rate_limit: { unit: 'day', requests_per_unit: 2 } }] },
];

describe('rate-limit stage over a Redis-backed service', function () {
  let redis: RedisProcess;
  let stores: RedisStore[];
  let services: RateLimitService[];

  before(async () => {
    redis = await startRedis();
    // A store deadline longer than any test: the stage's timeout_ms is what must cut a slow call short.
    stores = [
      createRedisStore({ url: redis.url, timeoutMs: 600_000 }),
      createRedisStore({ url: redis.url, timeoutMs: 600_000 }),
    ];
    await Promise.all(stores.map((s) => s.ready()));
    services = stores.map((store) => createRateLimitService({ limits: LIMITS, store, logger: memoryLogger() }));
  });
  after(async () => {
    await Promise.all(services.map((s) => s.close()));
    await redis.stop();
  });

  it('shares one user limit between two gateways', async () => {
    const apps = services.map(
      (service) =>
        stageApp(
          createRateLimitStage(rateLimitRecord({ timeout_ms: NO_BOUND_MS }), new Map([['ratelimit', service]]), {
            logger: memoryLogger(),
          }),
          labelledMappingRecord(),
        ).app,
    );
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (
          await request(apps[i % 2].callback())
            .get('/')
            .set('X-Demo-User', 'shared')
        ).status,
      );
    assert.deepEqual(statuses, [200, 200, 429, 429]);
  });

  it('applies the decision Redis made, not the failure mode, when the event loop was held up past timeout_ms', async () => {
    const store = createRedisStore({ url: redis.url, prefix: 'held' });
    await store.ready();
    // Once the decision is sent, the event loop is held, as a burst of
    // requests would hold it, until Redis has counted it and well past timeout_ms.
    const holding: RateLimitStore = {
      kind: 'redis',
      decide(checks, options) {
        const answer = store.decide(checks, options);
        setImmediate(() =>
          holdEventLoopUntil(redis.port, ['EVAL', "return #redis.call('KEYS', 'held:*')", '0'], '1', 200),
        );
        return answer;
      },
      close: () => store.close(),
    };
    const service = createRateLimitService({ limits: LIMITS, store: holding, logger: memoryLogger() });
    try {
      const stage = createRateLimitStage(
        rateLimitRecord({ timeout_ms: 20, failure_mode_deny: true }),
        new Map([['ratelimit', service]]),
        { logger: memoryLogger() },
      );
      const res = await request(stageApp(stage, labelledMappingRecord()).app.callback())
        .get('/')
        .set('X-Demo-User', 'held');
      assert.equal(res.status, 200);
      assert.equal(res.headers['ratelimit-policy'], '"default";q=2;w=86400');
      assert.equal(stage.stats().failures, 0);
      const [key] = await redis.client.keys('held:*');
      assert.equal(await redis.client.get(key), '1');
    } finally {
      await service.close();
    }
  });

  it('answers within timeout_ms by the failure mode while Redis does not answer', async () => {
    redis.pause();
    try {
      for (const deny of [false, true]) {
        const stage = createRateLimitStage(
          rateLimitRecord({ timeout_ms: 100, failure_mode_deny: deny }),
          new Map([['ratelimit', services[0]]]),
          {
            logger: memoryLogger(),
          },
        );
        const started = Date.now();
        const res = await request(stageApp(stage, labelledMappingRecord()).app.callback())
          .get('/')
          .set('X-Demo-User', 'frozen');
        const took = Date.now() - started;
        assert.equal(res.status, deny ? 500 : 200);
        assert.ok(took >= 90, `took ${took} ms`);
      }
    } finally {
      redis.resume();
    }
  });

  it('answers within timeout_ms by the failure mode once Redis is killed', async () => {
    await redis.kill();
    for (const deny of [false, true]) {
      const logger = memoryLogger();
      const stage = createRateLimitStage(
        rateLimitRecord({ timeout_ms: 100, failure_mode_deny: deny }),
        new Map([['ratelimit', services[0]]]),
        { logger },
      );
      const { app, seen } = stageApp(stage, labelledMappingRecord());
      for (let i = 0; i < 3; i++) {
        const res = await request(app.callback()).get('/').set('X-Demo-User', 'after-crash');
        assert.equal(res.status, deny ? 500 : 200);
      }
      assert.equal(seen.backendCalls, deny ? 0 : 3);
      assert.equal(stage.stats().failures, 3);
      assert.equal(logger.lines.length, 1);
    }
  });
});
