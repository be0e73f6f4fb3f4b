import assert from 'node:assert/strict';
import { createMemoryStore, createRateLimitService, type RateLimitStore, type WindowCheck } from '../../src/ratelimit';
import { memoryLogger } from '../support/memory-logger';

// 10 s into a minute, fixed: windows never turn during a test.
const T0 = Date.UTC(2024, 0, 1, 0, 0, 10);

const LIMITS = [{ domain: 'd', descriptors: [{ key: 'k', rate_limit: { unit: 'minute', requests_per_unit: 2 } }] }];

/** A memory store that keeps the keys it was asked about. */
function recordingStore(): RateLimitStore & { keys: string[] } {
  const inner = createMemoryStore({ now: () => T0 });
  const keys: string[] = [];
  return {
    kind: 'memory',
    keys,
    decide(checks: readonly WindowCheck[]) {
      for (const c of checks) keys.push(c.key);
      return inner.decide(checks);
    },
    close: () => inner.close(),
  };
}

describe('rate-limit counter keys', () => {
  it('stay short for a huge value, which is still counted against its own counter', async () => {
    const store = recordingStore();
    const service = createRateLimitService({ limits: LIMITS, store, now: () => T0, logger: memoryLogger() });
    const huge = (last: string) => ({
      domain: 'd',
      descriptors: [{ entries: [{ key: 'k', value: 'v'.repeat(1_000_000) + last }] }],
    });
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await service.shouldRateLimit(huge('a'))).overallCode);
    assert.deepEqual(codes, ['OK', 'OK', 'OVER_LIMIT']);
    // Differing in its last character only, another value has its own counter.
    assert.equal((await service.shouldRateLimit(huge('b'))).statuses[0].limitRemaining, 1);
    assert.ok(
      store.keys.every((k) => k.length <= 256),
      `a key of ${Math.max(...store.keys.map((k) => k.length))} characters`,
    );
    assert.equal(new Set(store.keys).size, 2);
  });

  it('stay as they were for the values of every day', async () => {
    const store = recordingStore();
    const service = createRateLimitService({ limits: LIMITS, store, now: () => T0, logger: memoryLogger() });
    await service.shouldRateLimit({ domain: 'd', descriptors: [{ entries: [{ key: 'k', value: 'alice_1' }] }] });
    assert.deepEqual(store.keys, [`d_k_alice\\_1_${T0 / 1000 - 10}`]);
  });

  it('tell apart a hashed long value and a short value written like its hash', async () => {
    const store = recordingStore();
    const service = createRateLimitService({ limits: LIMITS, store, now: () => T0, logger: memoryLogger() });
    await service.shouldRateLimit({ domain: 'd', descriptors: [{ entries: [{ key: 'k', value: 'x'.repeat(300) }] }] });
    const hashed = store.keys[0];
    // The same text sent as a value: escaped, so never the same key.
    const lookalike = hashed.slice('d_k_'.length, hashed.lastIndexOf('_'));
    await service.shouldRateLimit({ domain: 'd', descriptors: [{ entries: [{ key: 'k', value: lookalike }] }] });
    assert.notEqual(store.keys[1], hashed);
  });
});
