/**
 * @module ratelimit/shared/hash
 * The 64-bit keyed hash that names a counter in the shared table: the table
 * keeps no key strings, so two keys with one hash would share a counter.
 * Keys hold what clients send (headers, descriptor values), so the hash is a
 * keyed pseudo-random function, HalfSipHash's rounds (1 per word, 3 at the
 * end) over the key's UTF-16 code units with a random 64-bit key drawn when
 * the table is made: without the key no one can aim two values at one
 * counter, or a run of values at one stretch of the table, as they could
 * with FNV or Murmur, whose collisions can be found whatever their seed.
 * Two of n live counters share a hash with a chance near n² / 2⁶⁵.
 */

/** Where {@link hashKey} writes its two words. */
export interface HashOut {
  a: number;
  b: number;
}

/** `key` hashed under the 64-bit secret (`k0`, `k1`) into `out.a` and `out.b`, allocating nothing. */
export function hashKey(key: string, k0: number, k1: number, out: HashOut): void {
  let v0 = k0 | 0;
  let v1 = (k1 ^ 0xee) | 0;
  let v2 = (0x6c796765 ^ k0) | 0;
  let v3 = (0x74656462 ^ k1) | 0;
  const length = key.length;
  const whole = length & ~1;
  // One round a word of two UTF-16 code units; the last word holds an odd
  // code unit, and the length, so that no key is another's prefix.
  for (let i = 0; i <= whole; i += 2) {
    const m =
      i < whole
        ? key.charCodeAt(i) | (key.charCodeAt(i + 1) << 16)
        : (whole < length ? key.charCodeAt(whole) : 0) | (length << 16);
    v3 ^= m;
    v0 = (v0 + v1) | 0;
    v1 = (v1 << 5) | (v1 >>> 27);
    v1 ^= v0;
    v0 = (v0 << 16) | (v0 >>> 16);
    v2 = (v2 + v3) | 0;
    v3 = (v3 << 8) | (v3 >>> 24);
    v3 ^= v2;
    v0 = (v0 + v3) | 0;
    v3 = (v3 << 7) | (v3 >>> 25);
    v3 ^= v0;
    v2 = (v2 + v1) | 0;
    v1 = (v1 << 13) | (v1 >>> 19);
    v1 ^= v2;
    v2 = (v2 << 16) | (v2 >>> 16);
    v0 ^= m;
  }
  // Three rounds for the first output word, three more for the second.
  v2 ^= 0xee;
  for (let r = 0; r < 6; r++) {
    if (r === 3) {
      out.a = v1 ^ v3;
      v1 ^= 0xdd;
    }
    v0 = (v0 + v1) | 0;
    v1 = (v1 << 5) | (v1 >>> 27);
    v1 ^= v0;
    v0 = (v0 << 16) | (v0 >>> 16);
    v2 = (v2 + v3) | 0;
    v3 = (v3 << 8) | (v3 >>> 24);
    v3 ^= v2;
    v0 = (v0 + v3) | 0;
    v3 = (v3 << 7) | (v3 >>> 25);
    v3 ^= v0;
    v2 = (v2 + v1) | 0;
    v1 = (v1 << 13) | (v1 >>> 19);
    v1 ^= v2;
    v2 = (v2 << 16) | (v2 >>> 16);
  }
  out.b = v1 ^ v3;
}
