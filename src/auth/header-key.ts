/**
 * @module auth/header-key
 * Cache keys for `Authorization` headers: SHA-256 of the header behind a
 * random secret that never leaves the process, so the cache holds nothing from
 * which a credential could be recovered or guessed offline.
 */
import { hash, randomBytes } from 'node:crypto';

/**
 * Returns a function from a header value to its key: SHA-256 (base64) of the
 * secret followed by the header, as UTF-8. A key is only ever looked up in
 * the process's own cache and never shown, so what it must give is what
 * SHA-256 gives: no two headers share a key, and without the secret no key
 * can be computed or tested against a guess. (HMAC's second hash guards a
 * tag that is shown against length extension; no key is shown.) One hash
 * is half the cost of HMAC's two on every authenticated request.
 * `secret` is for tests; by default it is 32 random bytes as hex.
 */
export function createHeaderKeyer(secret: string = randomBytes(32).toString('hex')): (header: string) => string {
  if (!/^[\x20-\x7e]{32,}$/.test(secret)) throw new RangeError('the secret must be at least 32 printable ASCII characters');
  return (header) => hash('sha256', secret + header, 'base64');
}
