/**
 * @module auth/header-key
 * Cache keys for `Authorization` headers: HMAC-SHA256 under a random key that
 * never leaves the process, so the cache holds nothing from which a credential
 * could be recovered or guessed offline.
 */
import { createHmac, hash, randomBytes } from 'node:crypto';

/** SHA-256 works on 64-byte blocks; a key of exactly one block is used as it is. */
const BLOCK = 64;

/**
 * Returns a function from a header value to its key. It computes HMAC-SHA256
 * (RFC 2104) by hand with two one-shot hashes, which costs less than a Hmac
 * object per request. The key is 32 random bytes written as 64 hex digits, so
 * that the key and both pads are ASCII and hash as the same bytes as a string.
 * The header is hashed as UTF-8, as `createHmac().update(string)` does.
 * `secret` is for tests; by default it is random.
 */
export function createHeaderKeyer(secret: string = randomBytes(BLOCK / 2).toString('hex')): (header: string) => string {
  if (!/^[\x20-\x7e]{64}$/.test(secret)) throw new RangeError('the key must be 64 printable ASCII characters');
  const key = Buffer.from(secret, 'latin1');
  if (typeof hash !== 'function') {
    return (header) => createHmac('sha256', key).update(header).digest('base64');
  }
  const innerPad = Buffer.from(key.map((b) => b ^ 0x36)).toString('latin1');
  // Outer pad, then room for the inner digest: reused, as each call is synchronous.
  const outer = Buffer.alloc(BLOCK + 32);
  for (let i = 0; i < BLOCK; i++) outer[i] = key[i] ^ 0x5c;
  return (header) => {
    // The inner digest as a latin1 string: one byte per character, and no
    // Buffer allocated for it (which costs more than the hash).
    const inner = hash('sha256', innerPad + header, 'binary');
    outer.write(inner, BLOCK, 32, 'latin1');
    return hash('sha256', outer, 'base64');
  };
}
