/**
 * A map keyed by data read from a file: every key kept as data, and
 * `__proto__`, which a plain record would lose, refused by name.
 */
import assert from 'node:assert/strict';
import { z } from 'zod';
import { dataRecord, PROTO_KEY_REFUSED } from '../../src/files';

describe('files: a map keyed by data', () => {
  const schema = z.object({ labels: dataRecord(z.string(), z.string()) });

  it('keeps every key, those named like properties of every object too', () => {
    const labels = { constructor: 'a', toString: 'b', app: 'c' };
    assert.deepEqual(schema.parse({ labels }).labels, labels);
  });

  it('refuses a key named __proto__ at its path instead of dropping it', () => {
    const parsed = schema.safeParse(JSON.parse('{"labels":{"__proto__":"x","app":"y"}}'));
    assert.equal(parsed.success, false);
    assert.deepEqual(
      parsed.error.issues.map((i) => [i.path.join('.'), i.message]),
      [['labels.__proto__', PROTO_KEY_REFUSED]],
    );
  });
});
