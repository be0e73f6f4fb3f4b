/**
 * @module test/ratelimit/shared/hash
 * The hash that names a shared counter: the same for a key under one
 * secret, unrelated under another, and distinct for keys that differ little.
 */
import assert from 'node:assert/strict';
import { hashKey, type HashOut } from '../../../src/ratelimit/shared/hash';

const hashOf = (key: string, k0: number, k1: number): string => {
  const out: HashOut = { a: 0, b: 0 };
  hashKey(key, k0, k1, out);
  return `${out.a >>> 0}:${out.b >>> 0}`;
};

describe('the hash of a shared counter key', () => {
  it('is the same for a key each time under one secret', () => {
    assert.equal(hashOf('domain_user_alice_1700000000', 1, 2), hashOf('domain_user_alice_1700000000', 1, 2));
  });

  it('changes with the secret, so keys cannot be chosen to share one without it', () => {
    const key = 'domain_user_alice_1700000000';
    const hashes = new Set([hashOf(key, 1, 2), hashOf(key, 2, 1), hashOf(key, 1, 3), hashOf(key, 0, 0)]);
    assert.equal(hashes.size, 4);
  });

  it('gives 200 000 keys that differ in a digit, a character or their length as many hashes', () => {
    const seen = new Set<string>();
    let count = 0;
    for (let i = 0; i < 50_000; i++) {
      for (const key of [`api_user_${i}_1700000000`, `api_user_${i}_1700000060`, `api_user_${i}`, `api_user_${i}\0`]) {
        seen.add(hashOf(key, 0x9e3779b9, 0x7f4a7c15));
        count++;
      }
    }
    assert.equal(seen.size, count);
  });
});
