/**
 * @module test/support/store-behaviour
 * What every synchronous counter store must do as memory-store does, run
 * against a factory: the memory store and the shared one each pass it.
 */
import assert from 'node:assert/strict';
import type { MemoryStore, WindowCheck } from '../../src/ratelimit';

/** Makes a fresh, empty store. */
export type StoreFactory = (options?: { maxKeys?: number; now?: () => number }) => MemoryStore;

/** A check of one hit against a limit of 10 in a one-second window, with `over` in place. */
export const check = (key: string, over: Partial<WindowCheck> = {}): WindowCheck => ({
  key,
  hits: 1,
  limit: 10,
  ttlMs: 1000,
  enforce: true,
  ...over,
});

/** The decisions, expiry and bounds of a memory store, as tests of the store `makeStore` makes. */
export function itDecidesAsTheMemoryStore(makeStore: StoreFactory): void {
  it('admits and counts every counter of a request together', () => {
    const store = makeStore();
    const first = store.decide([check('a'), check('b', { hits: 3 })]);
    assert.deepEqual(first, { admitted: true, before: [0, 0] });
    assert.deepEqual(store.decide([check('a'), check('b')]), { admitted: true, before: [1, 3] });
  });

  it('changes no counter when one enforced counter would pass its limit', () => {
    const store = makeStore();
    store.decide([check('full', { hits: 10 })]);
    assert.deepEqual(store.decide([check('other'), check('full')]), { admitted: false, before: [0, 10] });
    assert.deepEqual(store.decide([check('other')]), { admitted: true, before: [0] });
  });

  it('counts a counter listed twice in one request in order, the second seeing the first', () => {
    const store = makeStore();
    const twice = [check('a', { limit: 3 }), check('a', { limit: 3 })];
    assert.deepEqual(store.decide(twice), { admitted: true, before: [0, 0] });
    // 2 stored: the first would make 3, the second 4, over the limit of 3.
    assert.deepEqual(store.decide(twice), { admitted: false, before: [2, 2] });
    assert.deepEqual(store.decide([check('a', { limit: 3 })]), { admitted: true, before: [2] });
    assert.deepEqual(store.decide([check('a', { limit: 3, hits: 0 })]).before, [3]);
  });

  it('lets a shadow counter go past its limit without refusing', () => {
    const store = makeStore();
    store.decide([check('s', { hits: 10, enforce: false })]);
    assert.deepEqual(store.decide([check('s', { enforce: false })]), { admitted: true, before: [10] });
    assert.deepEqual(store.decide([check('s', { enforce: false })]), { admitted: true, before: [11] });
  });

  it('forgets a counter once its window is over', () => {
    const clock = { t: 0 };
    const store = makeStore({ now: () => clock.t });
    store.decide([check('a', { hits: 5 })]);
    clock.t = 999;
    assert.deepEqual(store.decide([check('a', { hits: 0 })]).before, [5]);
    clock.t = 1000;
    assert.deepEqual(store.decide([check('a', { hits: 0 })]).before, [0]);
  });

  it('drops expired counters as new ones are written, without timers', () => {
    const clock = { t: 0 };
    const store = makeStore({ now: () => clock.t });
    for (let i = 0; i < 100; i++) store.decide([check(`old${i}`)]);
    clock.t = 5000;
    for (let i = 0; i < 100; i++) store.decide([check(`new${i}`)]);
    assert.ok(store.size <= 110, `size ${store.size}`);
  });

  it('keeps at most maxKeys counters, dropping the oldest', () => {
    const store = makeStore({ maxKeys: 10 });
    for (let i = 0; i < 50; i++) store.decide([check(`k${i}`, { ttlMs: 60_000 })]);
    assert.equal(store.size, 10);
    assert.deepEqual(store.decide([check('k49', { hits: 0 })]).before, [1]);
    assert.deepEqual(store.decide([check('k0', { hits: 0 })]).before, [0]);
  });

  it('makes room with expired counters before it drops a live one when full', () => {
    const clock = { t: 0 };
    const store = makeStore({ maxKeys: 100, now: () => clock.t });
    // The oldest counter is a day-long window, then hour-long ones, then 59 over within a second.
    store.decide([check('per-day', { hits: 7, limit: 100, ttlMs: 86_400_000 })]);
    for (let i = 0; i < 40; i++) store.decide([check(`hour${i}`, { ttlMs: 3_600_000 })]);
    for (let i = 0; i < 59; i++) store.decide([check(`short${i}`)]);
    clock.t = 2000;
    // As many new counters as expired ones: room enough without dropping a live one.
    for (let i = 0; i < 59; i++) store.decide([check(`new${i}`)]);
    assert.ok(store.size <= 100, `size ${store.size}`);
    assert.deepEqual(store.decide([check('per-day', { hits: 0, limit: 100, ttlMs: 86_400_000 })]).before, [7]);
    for (let i = 0; i < 40; i++)
      assert.deepEqual(store.decide([check(`hour${i}`, { hits: 0, ttlMs: 3_600_000 })]).before, [1], `hour${i}`);
  });
}
