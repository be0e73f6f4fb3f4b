/**
 * @module test/http/number-text
 * The text of per-request numbers: the digits String() writes, and nothing
 * kept into the old generation for each of them.
 */
import assert from 'node:assert/strict';
import { getHeapSpaceStatistics } from 'node:v8';
import { numberText } from '../../src/http';
import { collector } from '../support/collector';

const oldSpaceUsed = () => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;

/** How much the old generation grew while `text` wrote `count` numbers that never repeat, young collections between them as requests would meet them. */
function oldGrowthOf(text: (n: number) => string, count: number): number {
  const gc = collector();
  gc();
  const before = oldSpaceUsed();
  let length = 0;
  for (let i = 0; i < count; i++) {
    length += text(999_999_999 - i).length;
    if (i % 500 === 499) gc({ type: 'minor' });
  }
  assert.equal(length, count * 9);
  return oldSpaceUsed() - before;
}

describe('numberText', () => {
  it('writes the digits String() writes, for whole numbers and fractions alike', () => {
    for (const n of [
      0,
      -0,
      7,
      -12,
      999_999_999,
      2 ** 31,
      2 ** 53 - 1,
      1795688198961,
      0.01,
      0.1,
      1.5,
      12.34,
      -3.75,
      1e21,
      1.5e-7,
    ]) {
      assert.equal(numberText(n), String(n), `the text of ${n}`);
    }
  });

  it('leaves nothing in the old generation for numbers that never repeat, where String() leaves each one', () => {
    const count = 20_000;
    // A string kept by the number-string cache outlives two young collections and moves to the old generation: 24 bytes or more each.
    const kept = oldGrowthOf(String, count);
    assert.ok(
      kept > count * 16,
      `String() left ${kept} bytes for ${count} numbers: the measure sees what the cache keeps`,
    );
    const left = oldGrowthOf(numberText, count);
    // What else the process had young is promoted by the same collections: a few bytes a number at most, not a string each.
    assert.ok(
      left < count * 8 && left < kept / 4,
      `numberText left ${left} bytes in the old generation for ${count} numbers, String() ${kept}`,
    );
  });
});
