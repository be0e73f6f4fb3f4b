import assert from 'node:assert/strict';
import path from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import {
  createMemoryStore,
  createRateLimitService,
  LimitsConfigError,
  RateLimitRequestError,
  UNLIMITED_REMAINING,
  type RateLimitDescriptor,
  type RateLimitResponse,
  type RateLimitStore,
} from '../../src/ratelimit';
import { memoryLogger } from '../support/memory-logger';

const FIXTURE = path.join(__dirname, 'fixtures', 'envoy-config');
// 2024-01-01T00:00:10Z: 10 s into a minute, an hour and a day.
const T0 = Date.UTC(2024, 0, 1, 0, 0, 10);

function d(...pairs: string[]): RateLimitDescriptor {
  const entries = [];
  for (let i = 0; i < pairs.length; i += 2) entries.push({ key: pairs[i], value: pairs[i + 1] });
  return { entries };
}

function serviceAt(clock: { t: number }, options: Parameters<typeof createRateLimitService>[0] = {}) {
  const now = () => clock.t;
  return createRateLimitService({ limitsDir: FIXTURE, now, logger: memoryLogger(), ...options });
}

describe('rate-limit service', () => {
  it('reports the limit, what remains and the time to the window end', async () => {
    const service = serviceAt({ t: T0 });
    const res = await service.shouldRateLimit({ domain: 'messaging', descriptors: [d('to_number', '2061111111')] });
    assert.deepEqual(res, {
      overallCode: 'OK',
      statuses: [
        {
          code: 'OK',
          currentLimit: { requestsPerUnit: 100, unit: 'DAY' },
          limitRemaining: 99,
          durationUntilResetMs: 86_400_000 - 10_000,
        },
      ],
    });
  });

  it('answers OVER_LIMIT past the limit, and OK again in the next window', async () => {
    const clock = { t: T0 };
    const service = serviceAt(clock);
    const ask = () => service.shouldRateLimit({ domain: 'messaging', descriptors: [d('client', 'c1')] });
    assert.equal((await ask()).statuses[0].limitRemaining, 1);
    assert.equal((await ask()).overallCode, 'OK');
    const over = await ask();
    assert.equal(over.overallCode, 'OVER_LIMIT');
    assert.deepEqual(over.statuses[0], {
      code: 'OVER_LIMIT',
      currentLimit: { requestsPerUnit: 2, unit: 'SECOND' },
      limitRemaining: 0,
      durationUntilResetMs: 1000,
    });
    clock.t += 1000;
    assert.equal((await ask()).overallCode, 'OK');
  });

  it('aligns windows on the clock, as envoyproxy/ratelimit does', async () => {
    // 59.5 s into the minute: the window ends in half a second, whenever it began being used;
    // reported in whole seconds, as that service reports it (1 s, not 0 s and 500 ms).
    const clock = { t: T0 + 49_500 };
    const service = serviceAt(clock);
    const ask = () =>
      service.shouldRateLimit({ domain: 'messaging', descriptors: [d('client', 'c', 'path', '/v1/x')] });
    assert.equal((await ask()).statuses[0].durationUntilResetMs, 1000);
    await ask();
    await ask();
    assert.equal((await ask()).overallCode, 'OVER_LIMIT');
    clock.t += 500;
    const next = await ask();
    assert.equal(next.overallCode, 'OK');
    assert.equal(next.statuses[0].durationUntilResetMs, 60_000);
  });

  it('counts each value of a key apart', async () => {
    const service = serviceAt({ t: T0 });
    for (let i = 0; i < 2; i++) await service.shouldRateLimit({ domain: 'messaging', descriptors: [d('client', 'a')] });
    const other = await service.shouldRateLimit({ domain: 'messaging', descriptors: [d('client', 'b')] });
    assert.equal(other.statuses[0].limitRemaining, 1);
  });

  it('answers OK without a limit for an unknown domain, an unknown key or no descriptor', async () => {
    const service = serviceAt({ t: T0 });
    assert.deepEqual(await service.shouldRateLimit({ domain: 'nope', descriptors: [d('client', 'a')] }), {
      overallCode: 'OK',
      statuses: [{ code: 'OK', limitRemaining: 0 }],
    });
    assert.deepEqual(await service.shouldRateLimit({ domain: 'messaging', descriptors: [d('unknown', 'a')] }), {
      overallCode: 'OK',
      statuses: [{ code: 'OK', limitRemaining: 0 }],
    });
    assert.deepEqual(await service.shouldRateLimit({ domain: 'messaging', descriptors: [] }), {
      overallCode: 'OK',
      statuses: [],
    });
  });

  it('refuses an empty domain', async () => {
    const service = serviceAt({ t: T0 });
    await assert.rejects(service.shouldRateLimit({ domain: '', descriptors: [] }), RateLimitRequestError);
  });

  it('answers an unlimited descriptor OK with the largest remainder, counting nothing', async () => {
    const store = createMemoryStore();
    const service = serviceAt({ t: T0 }, { store });
    const res = await service.shouldRateLimit({
      domain: 'messaging',
      descriptors: [d('to_number', '2065550000'), d('ldap', 'x')],
    });
    assert.deepEqual(res.statuses, [
      { code: 'OK', limitRemaining: UNLIMITED_REMAINING },
      { code: 'OK', limitRemaining: UNLIMITED_REMAINING },
    ]);
    assert.equal(store.size, 0);
  });

  it('counts a shadow-mode rule but always answers it OK, its status marked shadow for the gateway', async () => {
    const service = serviceAt({ t: T0 });
    const ask = () =>
      service.shouldRateLimit({ domain: 'messaging', descriptors: [d('client', 'c', 'path', '/admin')] });
    assert.equal((await ask()).statuses[0].limitRemaining, 0);
    const second = await ask();
    assert.equal(second.overallCode, 'OK');
    assert.deepEqual(second.statuses[0], {
      code: 'OK',
      currentLimit: { name: 'admin-path', requestsPerUnit: 1, unit: 'MINUTE' },
      limitRemaining: 0,
      durationUntilResetMs: 50_000,
      shadow: true,
    });
  });

  it('refuses everything under a limit of zero', async () => {
    const service = serviceAt({ t: T0 });
    const res = await service.shouldRateLimit({ domain: 'edge', descriptors: [d('remote_address', '192.0.2.5')] });
    assert.equal(res.overallCode, 'OVER_LIMIT');
  });

  it('checks every descriptor and is over the limit when any one is', async () => {
    const service = serviceAt({ t: T0 });
    for (let i = 0; i < 2; i++) await service.shouldRateLimit({ domain: 'messaging', descriptors: [d('client', 'a')] });
    const res = await service.shouldRateLimit({
      domain: 'messaging',
      descriptors: [d('to_number', '1'), d('client', 'a'), d('nothing', 'x')],
    });
    assert.equal(res.overallCode, 'OVER_LIMIT');
    assert.deepEqual(
      res.statuses.map((s) => s.code),
      ['OK', 'OVER_LIMIT', 'OK'],
    );
  });

  it('does not use up the quota of other descriptors for a refused request', async () => {
    const service = serviceAt({ t: T0 });
    for (let i = 0; i < 2; i++) await service.shouldRateLimit({ domain: 'messaging', descriptors: [d('client', 'a')] });
    for (let i = 0; i < 5; i++) {
      const refused = await service.shouldRateLimit({
        domain: 'messaging',
        descriptors: [d('to_number', '1'), d('client', 'a')],
      });
      assert.equal(refused.overallCode, 'OVER_LIMIT');
      assert.equal(refused.statuses[0].limitRemaining, 100);
    }
    const alone = await service.shouldRateLimit({ domain: 'messaging', descriptors: [d('to_number', '1')] });
    assert.equal(alone.statuses[0].limitRemaining, 99);
  });

  it('lets a rule replace a named one when both apply to a request', async () => {
    const service = serviceAt({ t: T0 });
    const res = await service.shouldRateLimit({
      domain: 'edge',
      descriptors: [d('team', 'search', 'user', 'bob'), d('plan', 'premium', 'user', 'bob')],
    });
    assert.deepEqual(res.statuses[0], { code: 'OK', limitRemaining: 0 });
    assert.equal(res.statuses[1].currentLimit?.requestsPerUnit, 50);
    const alone = await service.shouldRateLimit({ domain: 'edge', descriptors: [d('team', 'search', 'user', 'bob')] });
    assert.equal(alone.statuses[0].limitRemaining, 4);
  });

  it('keeps an unlimited rule unlimited when another replaces its name, as envoyproxy/ratelimit does', async () => {
    const limits = [
      {
        domain: 'd',
        descriptors: [
          { key: 'internal', rate_limit: { name: 'base', unlimited: true } },
          { key: 'user', rate_limit: { unit: 'minute', requests_per_unit: 5, replaces: [{ name: 'base' }] } },
        ],
      },
    ];
    const service = createRateLimitService({ limits, now: () => T0, logger: memoryLogger() });
    const res = await service.shouldRateLimit({ domain: 'd', descriptors: [d('internal', 'x'), d('user', 'bob')] });
    assert.deepEqual(res.statuses[0], { code: 'OK', limitRemaining: UNLIMITED_REMAINING });
    assert.equal(res.statuses[1].limitRemaining, 4);
  });

  it('shares one counter among the values of a share_threshold wildcard', async () => {
    const service = serviceAt({ t: T0 });
    await service.shouldRateLimit({ domain: 'edge_tenants', descriptors: [d('tenant', 'acme-1')] });
    const res = await service.shouldRateLimit({ domain: 'edge_tenants', descriptors: [d('tenant', 'acme-2')] });
    assert.equal(res.statuses[0].limitRemaining, 2);
  });

  it('counts a descriptor listed twice in one request twice, in order, never past the limit', async () => {
    const limits = [{ domain: 'd', descriptors: [{ key: 'k', rate_limit: { unit: 'minute', requests_per_unit: 3 } }] }];
    const service = createRateLimitService({ limits, now: () => T0, logger: memoryLogger() });
    const twice = () => service.shouldRateLimit({ domain: 'd', descriptors: [d('k', 'v'), d('k', 'v')] });
    const first = await twice();
    assert.equal(first.overallCode, 'OK');
    assert.deepEqual(
      first.statuses.map((s) => s.limitRemaining),
      [2, 1],
    );
    // The second of the next pair would be the fourth hit: refused, and nothing is counted.
    const second = await twice();
    assert.equal(second.overallCode, 'OVER_LIMIT');
    assert.deepEqual(
      second.statuses.map((s) => [s.code, s.limitRemaining]),
      [
        ['OK', 1],
        ['OVER_LIMIT', 0],
      ],
    );
    const last = await service.shouldRateLimit({ domain: 'd', descriptors: [d('k', 'v')] });
    assert.deepEqual([last.overallCode, last.statuses[0].limitRemaining], ['OK', 0]);
    assert.equal(
      (await service.shouldRateLimit({ domain: 'd', descriptors: [d('k', 'v')] })).overallCode,
      'OVER_LIMIT',
    );
  });

  it('counts the values of a share_threshold wildcard in one request against their one limit', async () => {
    const service = serviceAt({ t: T0 });
    const four = await service.shouldRateLimit({
      domain: 'edge_tenants',
      descriptors: ['acme-1', 'acme-2', 'acme-3', 'acme-4'].map((v) => d('tenant', v)),
    });
    assert.equal(four.overallCode, 'OK');
    assert.deepEqual(
      four.statuses.map((s) => s.limitRemaining),
      [3, 2, 1, 0],
    );
    const fifth = await service.shouldRateLimit({ domain: 'edge_tenants', descriptors: [d('tenant', 'acme-5')] });
    assert.equal(fifth.overallCode, 'OVER_LIMIT');
  });

  it('refuses a request whose values of a share_threshold wildcard pass the limit together, counting none', async () => {
    const service = serviceAt({ t: T0 });
    const five = await service.shouldRateLimit({
      domain: 'edge_tenants',
      descriptors: ['a', 'b', 'c', 'd', 'e'].map((v) => d('tenant', `acme-${v}`)),
    });
    assert.equal(five.overallCode, 'OVER_LIMIT');
    assert.deepEqual(
      five.statuses.map((s) => s.code),
      ['OK', 'OK', 'OK', 'OK', 'OVER_LIMIT'],
    );
    const alone = await service.shouldRateLimit({ domain: 'edge_tenants', descriptors: [d('tenant', 'acme-a')] });
    assert.equal(alone.statuses[0].limitRemaining, 3);
  });

  it('lets a shadow-mode descriptor listed twice pass its limit without refusing the request', async () => {
    const service = serviceAt({ t: T0 });
    const admin = d('client', 'c', 'path', '/admin');
    const res = await service.shouldRateLimit({
      domain: 'messaging',
      descriptors: [admin, admin, d('to_number', '1')],
    });
    assert.equal(res.overallCode, 'OK');
    assert.deepEqual(
      res.statuses.map((s) => [s.code, s.limitRemaining]),
      [
        ['OK', 0],
        ['OK', 0],
        ['OK', 99],
      ],
    );
  });

  it('adds the hits a request or a descriptor asks for; zero only checks', async () => {
    const service = serviceAt({ t: T0 });
    const a = await service.shouldRateLimit({
      domain: 'messaging',
      hitsAddend: 10,
      descriptors: [d('to_number', '1')],
    });
    assert.equal(a.statuses[0].limitRemaining, 90);
    const b = await service.shouldRateLimit({
      domain: 'messaging',
      descriptors: [{ ...d('to_number', '1'), hitsAddend: 0 }],
    });
    assert.equal(b.statuses[0].limitRemaining, 90);
    const c = await service.shouldRateLimit({ domain: 'messaging', hitsAddend: 0, descriptors: [d('to_number', '1')] });
    assert.equal(c.statuses[0].limitRemaining, 89);
    const big = await service.shouldRateLimit({
      domain: 'messaging',
      hitsAddend: 90,
      descriptors: [d('to_number', '1')],
    });
    assert.equal(big.overallCode, 'OVER_LIMIT');
  });

  it('applies a limit given in the descriptor instead of the configured one', async () => {
    const service = serviceAt({ t: T0 });
    const ask = () =>
      service.shouldRateLimit({
        domain: 'messaging',
        descriptors: [{ ...d('anything', 'x'), limit: { requestsPerUnit: 1, unit: 'HOUR' } }],
      });
    assert.deepEqual((await ask()).statuses[0].currentLimit, { requestsPerUnit: 1, unit: 'HOUR' });
    assert.equal((await ask()).overallCode, 'OVER_LIMIT');
    const unknownDomain = await service.shouldRateLimit({
      domain: 'nope',
      descriptors: [{ ...d('x', 'y'), limit: { requestsPerUnit: 0, unit: 'HOUR' } }],
    });
    assert.equal(unknownDomain.overallCode, 'OK');
  });

  it('admits exactly the limit of 200 concurrent requests', async () => {
    const service = createRateLimitService({
      limits: [{ domain: 'd', descriptors: [{ key: 'k', rate_limit: { unit: 'hour', requests_per_unit: 50 } }] }],
      logger: memoryLogger(),
    });
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => service.shouldRateLimit({ domain: 'd', descriptors: [d('k', 'v')] })),
    );
    assert.equal(answers.filter((a) => a.overallCode === 'OK').length, 50);
  });

  it('decides at once over the memory store, and through a promise over a store that waits', async () => {
    const limits = [{ domain: 'd', descriptors: [{ key: 'k', rate_limit: { unit: 'hour', requests_per_unit: 1 } }] }];
    const memory = createRateLimitService({ limits, logger: memoryLogger() });
    const first = memory.decide!({ domain: 'd', descriptors: [d('k', 'v')] });
    assert.ok(!(first instanceof Promise));
    assert.equal(first.overallCode, 'OK');
    const second = memory.decide!({ domain: 'd', descriptors: [d('k', 'v')] });
    assert.equal((second as RateLimitResponse).overallCode, 'OVER_LIMIT');
    assert.throws(() => memory.decide!({ domain: '', descriptors: [] }), /domain must not be empty/);

    const inner = createMemoryStore();
    const waiting: RateLimitStore = {
      kind: 'waiting',
      decide: async (checks) => inner.decide(checks),
      close: async () => {},
    };
    const slow = createRateLimitService({ limits, store: waiting, logger: memoryLogger() });
    const answer = slow.decide!({ domain: 'd', descriptors: [d('k', 'v')] });
    assert.ok(answer instanceof Promise);
    assert.equal((await answer).overallCode, 'OK');
    assert.equal((await slow.decide!({ domain: 'd', descriptors: [d('k', 'v')] })).overallCode, 'OVER_LIMIT');
  });

  it('rejects, counts and logs once when the store fails', async () => {
    const logger = memoryLogger();
    const broken: RateLimitStore = {
      kind: 'broken',
      decide: () => Promise.reject(new Error('down')),
      close: async () => {},
    };
    const service = serviceAt({ t: T0 }, { store: broken, logger });
    for (let i = 0; i < 3; i++)
      await assert.rejects(service.shouldRateLimit({ domain: 'messaging', descriptors: [d('client', 'a')] }), /down/);
    assert.equal(service.stats().storeErrors, 3);
    assert.equal(logger.lines.filter((l) => l.msg === 'rate-limit store unavailable').length, 1);
    // Nothing to count: the store is not asked.
    assert.equal(
      (await service.shouldRateLimit({ domain: 'messaging', descriptors: [d('ldap', 'x')] })).overallCode,
      'OK',
    );
  });

  describe('reload', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-reload-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('applies a valid new set and keeps the counters', async () => {
      writeFileSync(
        path.join(dir, 'ratelimit.yaml'),
        'domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 2}\n',
      );
      const service = createRateLimitService({ limitsDir: dir, logger: memoryLogger() });
      await service.shouldRateLimit({ domain: 'd', descriptors: [d('k', 'v')] });
      writeFileSync(
        path.join(dir, 'ratelimit.yaml'),
        'domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 5}\n',
      );
      await service.reload();
      const res = await service.shouldRateLimit({ domain: 'd', descriptors: [d('k', 'v')] });
      assert.equal(res.statuses[0].limitRemaining, 3);
    });

    it('refuses an invalid set whole and keeps serving the old one', async () => {
      writeFileSync(
        path.join(dir, 'ratelimit.yaml'),
        'domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 2}\n',
      );
      const logger = memoryLogger();
      const service = createRateLimitService({ limitsDir: dir, logger });
      writeFileSync(
        path.join(dir, 'ratelimit.yaml'),
        'domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 9}\n  - key: j\n    rate_limit: {unit: hours}\n',
      );
      await assert.rejects(service.reload(), LimitsConfigError);
      const res = await service.shouldRateLimit({ domain: 'd', descriptors: [d('k', 'v')] });
      assert.equal(res.statuses[0].currentLimit?.requestsPerUnit, 2);
      assert.equal(logger.lines.at(-1)?.level, 'error');
    });

    it('fails to build on an invalid set', () => {
      writeFileSync(path.join(dir, 'ratelimit.yaml'), 'domain: d\nextra: 1\n');
      assert.throws(() => createRateLimitService({ limitsDir: dir, logger: memoryLogger() }), LimitsConfigError);
    });
  });
});
