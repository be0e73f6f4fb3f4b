/**
 * @module test/ratelimit/redis-counts-saturate-without-failing-other-calls
 * Huge hits (a `hits_addend` of 2^53 - 1, sums past it, counters pushed on
 * by a shadow or quota rule that never refuses) against a real Redis: the
 * other calls of the same script call are answered and counted exactly, the
 * huge ones are answered as the memory store answers them, and no counter
 * overflows or is left half written.
 */
import assert from 'node:assert/strict';
import {
  CallerGoneError,
  createRateLimitService,
  createRedisStore,
  type RateLimitRequest,
  type RateLimitResponse,
  type RateLimitService,
  type RateLimitStore,
  type RedisStore,
  type WindowCheck,
} from '../../src/ratelimit';
import { startRedis, type RedisProcess } from '../support/redis';
import { memoryLogger } from '../support/memory-logger';

const MAX = Number.MAX_SAFE_INTEGER;

const LIMITS = [
  {
    domain: 'd',
    descriptors: [
      { key: 'k', rate_limit: { unit: 'hour', requests_per_unit: 1000 } },
      { key: 'shadow', shadow_mode: true, rate_limit: { unit: 'minute', requests_per_unit: 1 } },
      { key: 'quota', quota_mode: true, rate_limit: { unit: 'minute', requests_per_unit: 5 } },
    ],
  },
];

const check = (key: string, over: Partial<WindowCheck> = {}): WindowCheck => ({
  key,
  hits: 1,
  limit: 10,
  ttlMs: 60_000,
  enforce: true,
  ...over,
});
const one = (key: string, value: string, hitsAddend?: number) => ({
  entries: [{ key, value }],
  ...(hitsAddend === undefined ? {} : { hitsAddend }),
});

/** An answer without what depends on the instant it was made. */
function shape(r: RateLimitResponse): unknown {
  return { ...r, statuses: r.statuses.map(({ durationUntilResetMs: _, ...s }) => s) };
}

describe('Redis store with huge hits', function () {
  let redis: RedisProcess;
  const stores: RateLimitStore[] = [];

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await redis.stop();
  });
  beforeEach(async () => {
    await redis.client.flushall();
  });

  async function store(prefix = 'p'): Promise<RedisStore> {
    const s = createRedisStore({ url: redis.url, prefix });
    stores.push(s);
    await s.ready();
    return s;
  }

  function service(s?: RateLimitStore): RateLimitService {
    const svc = createRateLimitService({ limits: LIMITS, logger: memoryLogger(), ...(s ? { store: s } : {}) });
    if (!s) stores.push(svc.store);
    return svc;
  }

  /** The same calls, all at once, through Redis and through the memory store: their answers, in call order. */
  async function bothStores(
    requests: RateLimitRequest[],
  ): Promise<{ redis: unknown[]; memory: unknown[]; store: RedisStore }> {
    const s = await store('gatehouse:ratelimit');
    const overRedis = service(s);
    const viaRedis = await Promise.all(requests.map((r) => overRedis.shouldRateLimit(r)));
    const memory = service();
    const viaMemory = await Promise.all(requests.map((r) => memory.shouldRateLimit(r)));
    return { redis: viaRedis.map(shape), memory: viaMemory.map(shape), store: s };
  }

  async function counter(pattern: string): Promise<string | null> {
    const keys = await redis.client.keys(`gatehouse:ratelimit:${pattern}`);
    assert.equal(keys.length, 1, `one counter matches ${pattern}: ${keys.join(', ')}`);
    return redis.client.get(keys[0]);
  }

  it("answers and counts every call of a burst in which other clients send hits_addend 2^53 - 1 on a shadow rule (the tester's case)", async () => {
    const requests: RateLimitRequest[] = [];
    for (let i = 0; i < 300; i++) requests.push({ domain: 'd', descriptors: [one('k', 'unrelated')] });
    // 25 calls on each of 4 shadow counters: their sums pass 2^53, and 10^17 where Redis writes them as 2.25e+17.
    for (let i = 0; i < 100; i++)
      requests.splice(i * 4, 0, { domain: 'd', descriptors: [one('shadow', `p${i % 4}`, MAX)] });
    const both = await bothStores(requests);
    // One script call for the burst, as before: no extra round trip.
    assert.equal(both.store.stats().batches, 1);
    assert.deepEqual(both.redis, both.memory);
    const unrelated = (both.redis as RateLimitResponse[]).filter((_, i) => i % 4 !== 0);
    assert.deepEqual(
      unrelated.map((r) => r.statuses[0].limitRemaining).sort((a, b) => b - a),
      Array.from({ length: 300 }, (_, i) => 999 - i),
    );
    assert.equal(await counter('d_k_unrelated_*'), '300');
    for (const i of [0, 1, 2, 3]) assert.equal(await counter(`d_shadow_p${i}_*`), String(MAX));
  });

  it('answers a huge hits_addend next to ordinary descriptors of the same request as the memory store does', async () => {
    const requests: RateLimitRequest[] = [
      { domain: 'd', descriptors: [one('k', 'a'), one('shadow', 'x', MAX), one('quota', 'q', MAX)] },
      // Refused whole by its enforced descriptor: counts nothing, its shadow descriptor included.
      { domain: 'd', descriptors: [one('shadow', 'x', 1), one('k', 'a', MAX)] },
      { domain: 'd', descriptors: [one('k', 'a'), one('shadow', 'x', MAX), one('shadow', 'x', MAX)] },
      { domain: 'd', descriptors: [one('quota', 'q', 3)], hitsAddend: MAX },
    ];
    const both = await bothStores(requests);
    assert.deepEqual(both.redis, both.memory);
    assert.deepEqual(
      (both.redis as RateLimitResponse[]).map((r) => r.overallCode),
      ['OK', 'OVER_LIMIT', 'OK', 'OK'],
    );
    assert.equal(await counter('d_k_a_*'), '2');
    assert.equal(await counter('d_shadow_x_*'), String(MAX));
    assert.equal(await counter('d_quota_q_*'), String(MAX));
  });

  it('keeps a shadow or quota counter at 2^53 - 1, with its window, under repeated huge hits', async () => {
    const requests: RateLimitRequest[] = [];
    for (let i = 0; i < 50; i++)
      requests.push({ domain: 'd', descriptors: [one('shadow', 'same', MAX), one('quota', 'same', MAX - i)] });
    const s = await store('gatehouse:ratelimit');
    const svc = service(s);
    // In one script call, then one call each: the sums past 2^53 happen in the script and across calls.
    const burst = await Promise.all(requests.map((r) => svc.shouldRateLimit(r)));
    for (const r of requests.slice(0, 5)) burst.push(await svc.shouldRateLimit(r));
    for (const r of burst) {
      assert.equal(r.overallCode, 'OK');
      assert.deepEqual(
        r.statuses.map((st) => [st.code, st.limitRemaining]),
        [
          ['OK', 0],
          ['OVER_LIMIT', 0],
        ],
      );
    }
    for (const name of ['shadow', 'quota']) {
      const keys = await redis.client.keys(`gatehouse:ratelimit:d_${name}_same_*`);
      assert.equal(await redis.client.get(keys[0]), String(MAX));
      const ttl = await redis.client.pttl(keys[0]);
      assert.ok(ttl > 0 && ttl <= 60_000, `ttl ${ttl}`);
    }
  });

  it('leaves a counter already past 2^53 - 1 where it is, and still decides the rest of the call', async () => {
    const s = await store();
    await redis.client.set('p:old', '9223372036854775800', 'PX', 60_000);
    const answers = await Promise.all([
      s.decide([check('old', { enforce: false, hits: MAX })]),
      s.decide([check('old', { hits: 1, limit: 5 })]),
      s.decide([check('fine')]),
    ]);
    assert.deepEqual(answers, [
      { admitted: true, before: [MAX] },
      { admitted: false, before: [MAX] },
      { admitted: true, before: [0] },
    ]);
    assert.equal(await redis.client.get('p:old'), '9223372036854775800');
    assert.equal(await redis.client.get('p:fine'), '1');
  });

  it('fails only the decision of a counter Lua reads as a number but Redis cannot add to', async () => {
    const s = await store();
    const odd = ['5.0', '1e3', ' 5', '0x10', '007', '-3'];
    for (const [i, v] of odd.entries()) await redis.client.set(`p:odd${i}`, v);
    const answers = await Promise.allSettled([
      ...odd.map((_, i) => s.decide([check(`odd${i}`)])),
      s.decide([check('fine')]),
    ]);
    assert.equal(s.stats().batches, 1);
    for (const a of answers.slice(0, odd.length)) {
      assert.equal(a.status, 'rejected');
      assert.match(String(a.reason), /holds something other than a count/);
    }
    assert.deepEqual((answers.at(-1) as PromiseFulfilledResult<unknown>).value, { admitted: true, before: [0] });
    for (const [i, v] of odd.entries()) assert.equal(await redis.client.get(`p:odd${i}`), v);
    assert.equal(await redis.client.get('p:fine'), '1');
  });

  it('refuses alone a check the script could not count exactly, before sending it', async () => {
    const s = await store();
    const answers = await Promise.allSettled([
      s.decide([check('a', { hits: 1.5 })]),
      s.decide([check('a', { hits: Number.NaN })]),
      s.decide([check('a', { hits: -1 })]),
      s.decide([check('a', { ttlMs: Number.NaN })]),
      s.decide([check('a', { limit: Number.NaN })]),
      // Past 2^53 - 1, hits count as 2^53 - 1: the memory store's answer for any limit of a rule.
      s.decide([check('b', { hits: 2 ** 60, enforce: false })]),
      s.decide([check('a')]),
    ]);
    for (const a of answers.slice(0, 5)) assert.equal(a.status, 'rejected');
    assert.deepEqual(
      answers.slice(5).map((a) => (a as PromiseFulfilledResult<unknown>).value),
      [
        { admitted: true, before: [0] },
        { admitted: true, before: [0] },
      ],
    );
    assert.equal(await redis.client.get('p:a'), '1');
    assert.equal(await redis.client.get('p:b'), String(MAX));
  });

  it('writes nothing of a script call Redis refuses to write (out of memory), and fails each of its decisions', async () => {
    const s = await store();
    await redis.client.set('p:held', '3', 'PX', 60_000);
    await redis.client.config('SET', 'maxmemory', '1');
    try {
      const answers = await Promise.allSettled([
        s.decide([check('held')]),
        s.decide([check('new', { hits: MAX, enforce: false })]),
      ]);
      assert.deepEqual(
        answers.map((a) => a.status),
        ['rejected', 'rejected'],
      );
      assert.match(String((answers[0] as PromiseRejectedResult).reason), /OOM/);
    } finally {
      await redis.client.config('SET', 'maxmemory', '0');
    }
    assert.equal(s.stats().batches, 1);
    assert.equal(await redis.client.get('p:held'), '3');
    assert.equal(await redis.client.exists('p:new'), 0);
  });

  it('takes back exactly what a huge decision added once its caller left', async () => {
    const s = await store();
    await redis.client.set('p:s', '5', 'PX', 60_000);
    let left = false;
    const gone = () => left;
    const kept = s.decide([check('s', { hits: MAX - 10, enforce: false })]);
    // Saturates 's' (adding 5 of its hits) and creates 't', in the same script call as `kept`.
    const cancelled = s.decide(
      [check('s', { hits: MAX, enforce: false }), check('t', { hits: 2 * 10 ** 14, enforce: false })],
      { gone },
    );
    const cancelledToo = s.decide([check('s', { hits: 1, enforce: false })], { gone });
    // After the script call is sent (this turn's flush), before its answer is read.
    setImmediate(() => (left = true));
    assert.deepEqual(await kept, { admitted: true, before: [5] });
    await assert.rejects(cancelled, CallerGoneError);
    await assert.rejects(cancelledToo, CallerGoneError);
    assert.equal(s.stats().batches, 1);
    // The take-back was sent before this call: it has run once this is answered.
    assert.deepEqual(await s.decide([check('s', { hits: 0, enforce: false })]), { admitted: true, before: [MAX - 5] });
    assert.equal(s.stats().takenBack, 2);
    assert.equal(await redis.client.get('p:s'), String(MAX - 5));
    assert.equal(await redis.client.exists('p:t'), 0);
  });
});
