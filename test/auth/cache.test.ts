import assert from 'node:assert/strict';
import { TtlLru } from '../../src/auth/cache';

describe('the verified credentials cache', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => {
    clock = 1000;
  });

  it('returns what was set until its time is up', () => {
    const cache = new TtlLru<string, string>({ max: 10, ttlMs: 100, now });
    cache.set('k', 'v');
    clock += 99;
    assert.equal(cache.get('k'), 'v');
    clock += 1;
    assert.equal(cache.get('k'), undefined);
    assert.equal(cache.size, 0);
  });

  it('drops the least recently used entry when it is full', () => {
    const cache = new TtlLru<string, number>({ max: 2, ttlMs: 1000, now });
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1); // b is now the oldest
    cache.set('c', 3);
    assert.equal(cache.get('b'), undefined);
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.get('c'), 3);
    assert.equal(cache.size, 2);
  });

  it('keeps the order of use exact when one entry is hit again and again', () => {
    const cache = new TtlLru<string, number>({ max: 2, ttlMs: 1000, now });
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('b'), 2);
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.get('a'), 1); // a stays the youngest, b the oldest
    cache.set('c', 3);
    assert.equal(cache.get('b'), undefined);
    assert.equal(cache.get('c'), 3);
    assert.equal(cache.get('c'), 3);
    assert.equal(cache.get('a'), 1); // now c is the oldest
    cache.set('d', 4);
    assert.equal(cache.get('c'), undefined);
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.get('d'), 4);
  });

  it('moves an entry hit after the youngest one expired', () => {
    const cache = new TtlLru<string, number>({ max: 2, ttlMs: 100, now });
    cache.set('a', 1);
    clock += 50;
    cache.set('b', 2);
    clock += 60; // a has expired, b has not
    assert.equal(cache.get('a'), undefined);
    cache.set('c', 3);
    assert.equal(cache.get('b'), 2);
    cache.set('d', 4); // c is the oldest now
    assert.equal(cache.get('c'), undefined);
    assert.equal(cache.get('b'), 2);
  });

  it('keeps nothing with a TTL or size of 0', () => {
    const noTtl = new TtlLru<string, number>({ max: 5, ttlMs: 0, now });
    const noRoom = new TtlLru<string, number>({ max: 0, ttlMs: 1000, now });
    noTtl.set('a', 1);
    noRoom.set('a', 1);
    assert.equal(noTtl.get('a'), undefined);
    assert.equal(noRoom.get('a'), undefined);
  });

  it('forgets everything on clear', () => {
    const cache = new TtlLru<string, number>({ max: 5, ttlMs: 1000, now });
    cache.set('a', 1);
    cache.clear();
    assert.equal(cache.get('a'), undefined);
  });

  it('marks the first hit past renewAfterMs as due for renewal, once per entry set', () => {
    const cache = new TtlLru<string, number>({ max: 5, ttlMs: 1000, renewAfterMs: 750, now });
    cache.set('a', 1);
    clock += 749;
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.hitDue, false);
    clock += 1;
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.hitDue, true);
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.hitDue, false, 'claimed by the hit before');
    assert.equal(cache.get('missing'), undefined);
    assert.equal(cache.hitDue, false);
    cache.set('a', 2);
    clock += 750;
    assert.equal(cache.get('a'), 2);
    assert.equal(cache.hitDue, true, 'set again, due again');
  });

  it('never marks a hit due without renewAfterMs', () => {
    const cache = new TtlLru<string, number>({ max: 5, ttlMs: 1000, now });
    cache.set('a', 1);
    clock += 999;
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.hitDue, false);
  });

  it('refuses a negative size', () => {
    assert.throws(() => new TtlLru({ max: -1, ttlMs: 10 }), RangeError);
  });
});
