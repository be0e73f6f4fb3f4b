/**
 * @module auth/header-key
 * Cache keys for `Authorization` headers: SHA-256 of the header behind a
 * random secret that never leaves the process, so the cache holds nothing from
 * which a credential could be recovered or guessed offline; and the last key
 * of each connection, remembered while it is open.
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
  if (!/^[\x20-\x7e]{32,}$/.test(secret))
    throw new RangeError('the secret must be at least 32 printable ASCII characters');
  return (header) => hash('sha256', secret + header, 'base64');
}

/** Whether `a` and `b` are the same text, in a time that depends on their lengths alone. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** The header last keyed on a connection, and its key. */
interface LastKeyed {
  header: string;
  key: string;
}

/**
 * Wraps `keyOf` so that it remembers, for each connection, the last header
 * it keyed and its key: a client on a keep-alive connection sends the same
 * credentials with every request, and the hash is the dearest step of a
 * check the cache answers. The header is compared in constant time, as one
 * connection may carry the requests of many users (a proxy in front): how
 * long the comparison takes must not tell how much of one user's header
 * another's shares. What is remembered goes with the connection; nothing
 * that outlives it holds a header.
 */
export function connectionKeyer(keyOf: (header: string) => string): (header: string, connection?: object) => string {
  const last = new WeakMap<object, LastKeyed>();
  return (header, connection) => {
    if (connection === undefined) return keyOf(header);
    const seen = last.get(connection);
    if (seen !== undefined && sameText(seen.header, header)) return seen.key;
    const key = keyOf(header);
    if (seen === undefined) last.set(connection, { header, key });
    else {
      seen.header = header;
      seen.key = key;
    }
    return key;
  };
}
