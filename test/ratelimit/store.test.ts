/**
 * @module test/ratelimit/store
 * What a store sees of a request's checks on one counter: each check is
 * judged with the hits of the checks before it on the same counter, however
 * many checks the request has.
 */
import assert from 'node:assert/strict';
import { earlierHits, type WindowCheck } from '../../src/ratelimit/store';

const check = (key: string, hits: number): WindowCheck => ({ key, hits, limit: 10, ttlMs: 1000, enforce: true });

/** The sums, counted the plain way. */
function expected(checks: readonly WindowCheck[]): number[] {
  return checks.map((c, i) =>
    checks.slice(0, i).reduce((sum, earlier) => sum + (earlier.key === c.key ? earlier.hits : 0), 0),
  );
}

describe('the earlier hits of a request on one counter', () => {
  it('are none for a request whose counters all differ', () => {
    assert.equal(earlierHits([check('a', 1)]), undefined);
    assert.equal(earlierHits([check('a', 1), check('b', 2), check('c', 3)]), undefined);
  });

  it('add up every earlier check on the same counter, and only those', () => {
    const checks = [check('a', 1), check('b', 2), check('a', 3), check('a', 4), check('b', 5)];
    assert.deepEqual(earlierHits(checks), [0, 0, 1, 4, 2]);
  });

  for (const length of [2, 8, 9, 40]) {
    it(`are the same for a request of ${length} checks, whichever way they are counted`, () => {
      const checks = Array.from({ length }, (_, i) => check(`k${(i * 7) % 3}`, i + 1));
      assert.deepEqual(earlierHits(checks) ?? checks.map(() => 0), expected(checks));
    });
  }
});
