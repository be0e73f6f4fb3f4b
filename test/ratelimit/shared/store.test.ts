/**
 * @module test/ratelimit/shared/store
 * A store over shared counters decides as the memory store does, call for
 * call, and several stores over one handle are one set of counters.
 */
import assert from 'node:assert/strict';
import {
  createMemoryStore,
  createSharedCounters,
  createSharedStore,
  MAX_SHARED_KEYS,
  type MemoryStore,
  type WindowCheck,
} from '../../../src/ratelimit';
import { check, itDecidesAsTheMemoryStore } from '../../support/store-behaviour';

const sharedStore = (options: { maxKeys?: number; now?: () => number } = {}): MemoryStore =>
  createSharedStore(createSharedCounters({ maxKeys: options.maxKeys }), { now: options.now });

/** A generator of the same numbers every run. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('shared store', () => {
  describe('on one thread', () => {
    itDecidesAsTheMemoryStore(sharedStore);
  });

  it('says it keeps its counters in shared memory', () => {
    assert.equal(sharedStore().kind, 'shared memory');
  });

  it('decides as the memory store through thousands of random requests, full table, expiry and all', () => {
    const clock = { t: 0 };
    const now = () => clock.t;
    const memory = createMemoryStore({ maxKeys: 40, now });
    const shared = sharedStore({ maxKeys: 40, now });
    const random = seeded(7);
    const pick = (n: number) => Math.floor(random() * n);
    for (let i = 0; i < 20_000; i++) {
      clock.t += pick(30);
      const checks: WindowCheck[] = Array.from({ length: 1 + pick(4) }, () =>
        check(`k${pick(120)}`, { hits: pick(3), limit: 1 + pick(8), ttlMs: 1 + pick(2000), enforce: pick(5) > 0 }),
      );
      assert.deepEqual(shared.decide(checks), memory.decide(checks), `request ${i}`);
      assert.equal(shared.size, memory.size, `size after request ${i}`);
    }
  });

  it('decides a request of many checks, some on one counter, as the memory store', () => {
    const memory = createMemoryStore();
    const shared = sharedStore();
    const checks = Array.from({ length: 40 }, (_, i) => check(`k${i % 7}`, { hits: 1 + (i % 3), limit: 60 }));
    for (let round = 0; round < 4; round++) assert.deepEqual(shared.decide(checks), memory.decide(checks));
  });

  it('tells apart keys that differ by one character, their length, or a character outside Latin-1', () => {
    const store = sharedStore();
    const keys = ['', 'a', 'a\0', '\0a', 'ab', 'ba', 'abc', 'abd', 'é', 'e', '𝄞', '\ud834', 'domain_k_v_1700000000'];
    for (const [i, key] of keys.entries()) store.decide([check(key, { hits: i + 1, limit: 100 })]);
    for (const [i, key] of keys.entries()) {
      assert.deepEqual(store.decide([check(key, { hits: 0 })]).before, [i + 1], JSON.stringify(key));
    }
  });

  it('is one set of counters for every store made from the same handle', async () => {
    const counters = createSharedCounters({ maxKeys: 10 });
    const first = createSharedStore(counters);
    const second = createSharedStore(structuredClone(counters));
    assert.deepEqual(first.decide([check('a', { limit: 2 })]), { admitted: true, before: [0] });
    assert.deepEqual(second.decide([check('a', { limit: 2 })]), { admitted: true, before: [1] });
    assert.deepEqual(first.decide([check('a', { limit: 2 })]), { admitted: false, before: [2] });
    await second.close();
    assert.deepEqual(first.decide([check('a', { hits: 0 })]).before, [2]);
    assert.equal(createSharedStore(counters).size, 1);
  });

  it('refuses a decision asked for within another on the same thread, and goes on deciding', () => {
    const counters = createSharedCounters();
    const inner = createSharedStore(counters);
    const outer = createSharedStore(counters, {
      now: () => {
        inner.decide([check('b')]);
        return 0;
      },
    });
    assert.throws(() => outer.decide([check('a')]), /a decision was asked for within another on the same thread/);
    assert.deepEqual(inner.decide([check('a')]), { admitted: true, before: [0] });
  });

  it('keeps counters apart in two sets made separately', () => {
    const first = createSharedStore(createSharedCounters());
    const second = createSharedStore(createSharedCounters());
    first.decide([check('a', { hits: 4 })]);
    assert.deepEqual(second.decide([check('a', { hits: 0 })]).before, [0]);
  });

  it('refuses a maxKeys that is not a whole number from 1 to its largest', () => {
    for (const maxKeys of [0, -1, 1.5, Number.NaN, MAX_SHARED_KEYS + 1]) {
      assert.throws(() => createSharedCounters({ maxKeys }), /maxKeys must be a whole number from 1 to 16777216/);
    }
    assert.equal(createSharedCounters({ maxKeys: 1 }).maxKeys, 1);
  });

  it('refuses a handle it did not make', () => {
    const stray = [
      undefined,
      {},
      { buffer: new ArrayBuffer(1024) },
      { buffer: new SharedArrayBuffer(1024) },
      { buffer: createSharedCounters({ maxKeys: 4 }).buffer.slice(0, 64) },
    ];
    for (const handle of stray) {
      assert.throws(
        () => createSharedStore(handle as never),
        (err: unknown) => err instanceof TypeError && /^shared counters: /.test(err.message),
      );
    }
  });
});
