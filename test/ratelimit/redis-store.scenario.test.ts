import assert from 'node:assert/strict';
import {
  createRateLimitService,
  createRedisStore,
  type RedisStore,
  type RateLimitService,
  type WindowCheck,
} from '../../src/ratelimit';
import { startRedis, useRedis } from '../support/redis';
import { memoryLogger } from '../support/memory-logger';
import { NO_BOUND_MS } from '../support/polling';

const check = (key: string, over: Partial<WindowCheck> = {}): WindowCheck => ({
  key,
  hits: 1,
  limit: 10,
  ttlMs: 60_000,
  enforce: true,
  ...over,
});

const LIMITS = [
  {
    domain: 'd',
    descriptors: [
      { key: 'k', rate_limit: { unit: 'hour', requests_per_unit: 50 } },
      { key: 'other', rate_limit: { unit: 'hour', requests_per_unit: 1000 } },
    ],
  },
  {
    domain: 'small',
    descriptors: [
      { key: 'k', rate_limit: { unit: 'minute', requests_per_unit: 3 } },
      { key: 'tenant', value: 'acme*', share_threshold: true, rate_limit: { unit: 'minute', requests_per_unit: 4 } },
    ],
  },
];

const one = (key: string, value: string) => ({ entries: [{ key, value }] });

describe('Redis store', function () {
  const redis = useRedis();
  const store = redis.store;

  function service(s: RedisStore): RateLimitService {
    return createRateLimitService({ limits: LIMITS, store: s, logger: memoryLogger() });
  }

  it('keeps each counter under the prefix, with an expiry at the window end', async () => {
    const s = store({ prefix: 'test' });
    await s.ready();
    assert.deepEqual(await s.decide([check('a', { hits: 2, ttlMs: 30_000 })]), { admitted: true, before: [0] });
    assert.equal(await redis.client.get('test:a'), '2');
    const ttl = await redis.client.pttl('test:a');
    assert.ok(ttl > 29_000 && ttl <= 30_000, `ttl ${ttl}`);
  });

  it('writes nothing for a refused request', async () => {
    const s = store({ prefix: 'p' });
    await s.ready();
    await s.decide([check('full', { hits: 10 })]);
    assert.deepEqual(await s.decide([check('other'), check('full')]), { admitted: false, before: [0, 10] });
    assert.equal(await redis.client.exists('p:other'), 0);
    assert.equal(await redis.client.get('p:full'), '10');
  });

  it('counts a counter listed twice in one request in order, and stores the sum once admitted', async () => {
    const s = store({ prefix: 'p' });
    await s.ready();
    const twice = [check('a', { limit: 3 }), check('a', { limit: 3 })];
    assert.deepEqual(await s.decide(twice), { admitted: true, before: [0, 0] });
    assert.equal(await redis.client.get('p:a'), '2');
    const ttl = await redis.client.pttl('p:a');
    assert.ok(ttl > 59_000 && ttl <= 60_000, `ttl ${ttl}`);
    // 2 stored: the second of the pair would make 4, over the limit of 3.
    assert.deepEqual(await s.decide(twice), { admitted: false, before: [2, 2] });
    assert.equal(await redis.client.get('p:a'), '2');
  });

  it('never admits past the limit a descriptor listed twice in one request', async () => {
    const s = store();
    await s.ready();
    const svc = service(s);
    const twice = () => svc.shouldRateLimit({ domain: 'small', descriptors: [one('k', 'v'), one('k', 'v')] });
    const first = await twice();
    assert.deepEqual(
      first.statuses.map((st) => [st.code, st.limitRemaining]),
      [
        ['OK', 2],
        ['OK', 1],
      ],
    );
    const second = await twice();
    assert.equal(second.overallCode, 'OVER_LIMIT');
    assert.deepEqual(
      second.statuses.map((st) => [st.code, st.limitRemaining]),
      [
        ['OK', 1],
        ['OVER_LIMIT', 0],
      ],
    );
    const keys = await redis.client.keys('*');
    assert.equal(keys.length, 1);
    assert.equal(await redis.client.get(keys[0]), '2');
  });

  it('counts the values of a share_threshold wildcard in one request on their one shared counter', async () => {
    const s = store();
    await s.ready();
    const svc = service(s);
    const tenants = (...values: string[]) =>
      svc.shouldRateLimit({ domain: 'small', descriptors: values.map((v) => one('tenant', v)) });
    const four = await tenants('acme-1', 'acme-2', 'acme-3', 'acme-4');
    assert.equal(four.overallCode, 'OK');
    assert.deepEqual(
      four.statuses.map((st) => st.limitRemaining),
      [3, 2, 1, 0],
    );
    const keys = await redis.client.keys('*');
    assert.equal(keys.length, 1);
    assert.match(keys[0], /^gatehouse:ratelimit:small_tenant_acme\*_\d+$/);
    assert.equal(await redis.client.get(keys[0]), '4');
    assert.equal((await tenants('acme-5')).overallCode, 'OVER_LIMIT');
    assert.equal(await redis.client.get(keys[0]), '4');
  });

  it('refuses values of a share_threshold wildcard that pass the limit together, storing nothing', async () => {
    const s = store();
    await s.ready();
    const svc = service(s);
    const five = await svc.shouldRateLimit({
      domain: 'small',
      descriptors: ['a', 'b', 'c', 'd', 'e'].map((v) => one('tenant', `acme-${v}`)),
    });
    assert.equal(five.overallCode, 'OVER_LIMIT');
    assert.deepEqual(
      five.statuses.map((st) => st.code),
      ['OK', 'OK', 'OK', 'OK', 'OVER_LIMIT'],
    );
    assert.deepEqual(await redis.client.keys('*'), []);
  });

  it('uses the service key layout <prefix>:<domain>_<entries>_<window>', async () => {
    const s = store();
    await s.ready();
    await service(s).shouldRateLimit({ domain: 'd', descriptors: [{ entries: [{ key: 'k', value: 'v_1' }] }] });
    const keys = await redis.client.keys('*');
    assert.equal(keys.length, 1);
    assert.match(keys[0], /^gatehouse:ratelimit:d_k_v\\_1_\d+$/);
    assert.equal(Number(keys[0].split('_').at(-1)) % 3600, 0);
  });

  it('loads the script again after Redis forgot it', async () => {
    const s = store();
    await s.ready();
    await s.decide([check('a')]);
    await redis.client.script('FLUSH');
    assert.deepEqual(await s.decide([check('a')]), { admitted: true, before: [1] });
  });

  it('admits exactly the limit of 200 concurrent requests', async () => {
    const s = store();
    await s.ready();
    const svc = service(s);
    const answers = await Promise.all(
      Array.from({ length: 200 }, () =>
        svc.shouldRateLimit({ domain: 'd', descriptors: [{ entries: [{ key: 'k', value: 'x' }] }] }),
      ),
    );
    assert.equal(answers.filter((a) => a.overallCode === 'OK').length, 50);
  });

  it('shares limits exactly between two services on one Redis', async () => {
    const stores = [store(), store()];
    const [a, b] = stores.map(service);
    await Promise.all(stores.map((s) => s.ready()));
    const ask = (svc: RateLimitService) =>
      svc.shouldRateLimit({
        domain: 'd',
        descriptors: [{ entries: [{ key: 'other', value: 'y' }] }, { entries: [{ key: 'k', value: 'shared' }] }],
      });
    const answers = await Promise.all(Array.from({ length: 150 }, (_, i) => ask(i % 2 ? a : b)));
    assert.equal(answers.filter((r) => r.overallCode === 'OK').length, 50);
    // The refused requests took nothing from the other descriptor.
    const keys = await redis.client.keys('*other*');
    assert.equal(await redis.client.get(keys[0]), '50');
  });
});

describe('Redis store when Redis goes away', function () {
  it('fails each call within its deadline, then works again once Redis is back', async () => {
    const redis = await startRedis();
    // The calls that must fail set the deadline; the others wait for Redis as long as it takes.
    const s = createRedisStore({ url: redis.url, timeoutMs: NO_BOUND_MS });
    let again: Awaited<ReturnType<typeof startRedis>> | undefined;
    try {
      await s.ready();
      assert.equal((await s.decide([check('a')])).admitted, true);
      await redis.kill();
      // Each fails rather than hangs: one that hung would hold the test past its timeout.
      for (let i = 0; i < 5; i++) await assert.rejects(Promise.resolve(s.decide([check('a')], { timeoutMs: 50 })));
      again = await startRedis({ port: redis.port });
      await s.ready();
      assert.deepEqual(await s.decide([check('a')]), { admitted: true, before: [0] });
    } finally {
      await s.close();
      await redis.stop();
      await again?.stop();
    }
  });

  it('fails a call within its deadline when Redis stops answering', async () => {
    const redis = await startRedis();
    const s = createRedisStore({ url: redis.url, timeoutMs: 50 });
    try {
      await s.ready();
      redis.pause();
      // Redis stays paused for good: only the deadline can end the call.
      await assert.rejects(Promise.resolve(s.decide([check('a')])), /timed out/i);
    } finally {
      redis.resume();
      await s.close();
      await redis.stop();
    }
  });

  it('closes at once while Redis is away, ending its attempts to reconnect, so that the process can exit', async () => {
    const redis = await startRedis();
    const port = redis.port;
    await redis.stop();
    const s = createRedisStore({ url: `redis://127.0.0.1:${port}` });
    let attempts = 0;
    s.client.on('reconnecting', () => attempts++);
    await new Promise<void>((resolve) => s.client.once('reconnecting', () => resolve()));
    await s.close();
    const after = attempts;
    // A reconnection attempt comes within ioredis's first retry delays (50 ms, 100 ms...): none may come once closed.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(attempts, after);
  });
});
