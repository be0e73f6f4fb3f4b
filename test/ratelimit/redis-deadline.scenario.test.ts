import assert from 'node:assert/strict';
import {
  CallerGoneError,
  createRateLimitGrpcServer,
  createRateLimitService,
  createRedisStore,
  type RateLimiter,
  type RedisStore,
  type RedisStoreOptions,
  type WindowCheck,
} from '../../src/ratelimit';
import { HELD_UP_MAX_MS } from '../../src/ratelimit/deadline';
import { grpcClients } from '../support/grpc-clients';
import { holdEventLoopUntil, startRedis, useRedis } from '../support/redis';
import { memoryLogger } from '../support/memory-logger';
import { NO_BOUND_MS } from '../support/polling';

const check = (key: string, over: Partial<WindowCheck> = {}): WindowCheck => ({
  key,
  hits: 1,
  limit: 50,
  ttlMs: 60_000,
  enforce: true,
  ...over,
});
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Redis store deadlines', function () {
  const redis = useRedis();

  async function store(options: RedisStoreOptions = {}): Promise<RedisStore> {
    const s = redis.store({ prefix: 'p', ...options });
    await s.ready();
    return s;
  }

  /** Resolves once every script `s` sent before has run and its answer has been read. */
  async function barrier(s: RedisStore, key: string): Promise<number> {
    return (await s.decide([check(key, { hits: 0 })])).before[0];
  }

  beforeEach(async () => {
    await redis.client.config('RESETSTAT');
  });

  it('sends the decisions asked for in one turn of the event loop to Redis as one script call', async () => {
    const s = await store();
    const answers = await Promise.all(Array.from({ length: 300 }, () => s.decide([check('burst')])));
    assert.equal(answers.filter((a) => a.admitted).length, 50);
    assert.deepEqual(
      answers.filter((a) => a.admitted).map((a) => a.before[0]),
      Array.from({ length: 50 }, (_, i) => i),
    );
    const stats = await redis.client.info('commandstats');
    const calls = [...stats.matchAll(/cmdstat_eval(?:sha)?:calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
    assert.equal(calls, 1);
    assert.equal(await redis.client.get('p:burst'), '50');
  });

  it('splits the decisions of a turn into script calls of about 2000 checks, so as not to hold Redis long', async () => {
    const s = await store();
    const wide = Array.from({ length: 1000 }, (_, i) => check(`wide-${i}`));
    const answers = await Promise.all(Array.from({ length: 25 }, () => s.decide(wide)));
    assert.deepEqual(
      answers.map((a) => [a.admitted, a.before[0], a.before[999]]),
      Array.from({ length: 25 }, (_, i) => [true, i, i]),
    );
    assert.equal(s.stats().batches, 13);
    assert.equal(await redis.client.get('p:wide-999'), '25');
  });

  it('answers a decision Redis made while the event loop was held up past the deadline', async () => {
    const s = await store({ timeoutMs: 20 });
    const answer = s.decide([check('held')]);
    await nextTurn();
    // As a burst of requests would: the answer waits unread while the deadline's timer is overdue.
    holdEventLoopUntil(redis.port, ['GET', 'p:held'], '1', 200);
    assert.deepEqual(await answer, { admitted: true, before: [0] });
    assert.equal(s.stats().late, 0);
  });

  it('fails a decision at its deadline while Redis does not answer; resumed later, Redis counts nothing', async () => {
    // A default longer than the test: only the caller's 30 ms can end the decision, as the message says.
    const s = await store({ timeoutMs: 600_000 });
    // A first answer tells the store how Redis's clock reads.
    await barrier(s, 'frozen');
    redis.pause();
    await assert.rejects(s.decide([check('frozen')], { timeoutMs: 30 }), /timed out: no decision within 30 ms/);
    // Past the longest a caller may wait: the script, run now, must count nothing.
    await pause(HELD_UP_MAX_MS + 100);
    redis.resume();
    assert.equal(await barrier(s, 'frozen'), 0);
    assert.equal(await redis.client.exists('p:frozen'), 0);
    assert.equal(s.stats().takenBack, 0);
  });

  it('takes back a decision Redis counted after its deadline had failed it', async () => {
    const s = await store();
    redis.pause();
    await assert.rejects(s.decide([check('late')], { timeoutMs: 30 }), /timed out/);
    redis.resume();
    // The late script runs first; its answer is read before the barrier's, and the hit taken back.
    await barrier(s, 'late');
    assert.equal(await barrier(s, 'late'), 0);
    assert.equal(await redis.client.exists('p:late'), 0);
  });

  it('takes back a decision whose caller left after it was sent', async () => {
    const s = await store();
    let left = false;
    const answer = s.decide([check('left', { hits: 3 })], { gone: () => left });
    await nextTurn();
    left = true;
    await assert.rejects(answer, CallerGoneError);
    assert.equal(await barrier(s, 'left'), 0);
    assert.equal(s.stats().takenBack, 1);
    assert.equal(await redis.client.exists('p:left'), 0);
  });

  it('sends nothing for a caller that left before its decision was sent', async () => {
    const s = await store();
    const answer = s.decide([check('never')], { gone: () => true });
    await assert.rejects(answer, CallerGoneError);
    assert.equal(s.stats().batches, 0);
  });

  it('waits as long as its caller allows rather than its own default', async () => {
    const s = await store({ timeoutMs: 20 });
    redis.pause();
    // Longer than the test: only Redis's answer ends it.
    const answer = s.decide([check('patient')], { timeoutMs: 600_000 });
    await pause(200);
    redis.resume();
    assert.deepEqual(await answer, { admitted: true, before: [0] });
  });

  it('fails only the decision of a counter that holds something other than a count', async () => {
    const s = await store();
    await redis.client.set('p:text', 'not a number');
    await redis.client.set('p:fraction', '1.5');
    await redis.client.rpush('p:list', 'x');
    const answers = await Promise.allSettled(['text', 'fraction', 'list', 'fine'].map((key) => s.decide([check(key)])));
    for (const broken of answers.slice(0, 3)) {
      assert.equal(broken.status, 'rejected');
      assert.match(String(broken.reason), /holds something other than a count/);
    }
    assert.deepEqual((answers[3] as PromiseFulfilledResult<unknown>).value, { admitted: true, before: [0] });
    assert.equal(s.stats().batches, 1);
    assert.equal(await redis.client.get('p:text'), 'not a number');
    assert.equal(await redis.client.get('p:fraction'), '1.5');
    assert.equal(await redis.client.get('p:fine'), '1');
  });
});

describe('rate-limit gRPC server over Redis when a call is cancelled', function () {
  it('takes back the decision of a call cancelled before Redis answered', async () => {
    const redis = await startRedis();
    const store = createRedisStore({ url: redis.url, prefix: 'p', timeoutMs: NO_BOUND_MS });
    const service = createRateLimitService({
      limits: [{ domain: 'd', descriptors: [{ key: 'k', rate_limit: { unit: 'day', requests_per_unit: 5 } }] }],
      store,
      logger: memoryLogger(),
    });
    // The service as the server sees it, to learn when it has told the service of the cancel.
    let gone: (() => boolean) | undefined;
    const watched: RateLimiter = {
      shouldRateLimit(request, options) {
        gone = options?.gone;
        return service.shouldRateLimit(request, options);
      },
    };
    const server = createRateLimitGrpcServer(watched, { port: 0 });
    const clients = grpcClients(`127.0.0.1:${await server.start()}`);
    try {
      await store.ready();
      redis.pause();
      const request = { domain: 'd', descriptors: [{ entries: [{ key: 'k', value: 'v' }] }] };
      // A deadline longer than the test: the cancel ends the call.
      const call = clients.envoy.ShouldRateLimit(request, { deadline: Date.now() + 600_000 }, () => {});
      await until(() => store.stats().batches === 1);
      call.cancel();
      await until(() => gone?.() === true);
      redis.resume();
      const keys = () => redis.client.keys('p:*');
      // Once the late answer is read, the hit is taken back, and the counter gone with it.
      await until(() => store.stats().takenBack === 1);
      await store.decide([{ key: 'barrier', hits: 0, limit: 1, ttlMs: 1000, enforce: true }]);
      assert.deepEqual(await keys(), []);
    } finally {
      clients.close();
      await server.stop();
      await service.close();
      await redis.stop();
    }
  });
});

/** Resolves once `condition` holds, looking every few milliseconds. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await pause(5);
}
