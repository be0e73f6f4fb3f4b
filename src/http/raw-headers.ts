/**
 * @module http/raw-headers
 * What a request's raw header lines say that `req.headers` hides: Node keeps
 * only the first line of a header such as `Host` or `Authorization`, and
 * reads every value byte as one character.
 */
import { isUtf8 } from 'node:buffer';

/**
 * Every value of header `name` (lower case) when the request has more than
 * one line of it; undefined for none or one, the usual case, which allocates
 * nothing.
 */
export function repeatedHeader(rawHeaders: readonly string[], name: string): string[] | undefined {
  let found: string | undefined;
  let all: string[] | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i];
    if (raw.length !== name.length || raw.toLowerCase() !== name) continue;
    if (found === undefined) found = rawHeaders[i + 1];
    else (all ??= [found]).push(rawHeaders[i + 1]);
  }
  return all;
}

/**
 * A header value as the text its bytes spell in UTF-8: Node hands values over
 * one character per byte, so `jürgen` sent as UTF-8 reads `jÃ¼rgen`. An ASCII
 * value (the usual case) is returned as it is, without allocating; bytes that
 * are not UTF-8 are left one character per byte, and a value holding a
 * character above U+00FF was text already.
 */
export function headerText(value: string): string {
  let high = false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    // Above 0xff, the text was decoded already (set by code, not read from the wire).
    if (c > 0xff) return value;
    if (c > 0x7f) high = true;
  }
  if (!high) return value;
  const bytes = Buffer.from(value, 'latin1');
  return isUtf8(bytes) ? bytes.toString('utf8') : value;
}
