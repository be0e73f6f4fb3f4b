/**
 * @module gateway/request/headers/lookalike-headers
 * Header names a backend reads as another. CGI, WSGI, Rack and PHP turn a
 * header name into a variable (`HTTP_X_API_KEY`) with `-` and `_` alike, and
 * PHP reads `.` as `_` too, so `X-Api-Key`, `X_Api_Key` and `X.Api.Key` are
 * one header there, and three to the gateway. A header the gateway routes,
 * limits or edits by, or writes itself, may reach a backend in its own
 * spelling only: another would be read there as the header the gateway never
 * saw (a label header past its rate limit, a header a Mapping removes, a
 * client's `X_Forwarded_For`).
 */
import type { IncomingMessage } from 'node:http';

const DASH = 45;
const UNDERSCORE = 95;
const DOT = 46;

/** A name's character as such a backend reads it: lower case, `_` and `.` as `-`. */
function folded(c: number): number {
  if (c === UNDERSCORE || c === DOT) return DASH;
  return c >= 65 && c <= 90 ? c + 32 : c;
}

/** A {@link relation}: another name. */
export const UNRELATED = 0;
/** A {@link relation}: the name itself, in any case. */
export const SAME = 1;
/** A {@link relation}: the name spelt otherwise, as such a backend reads it alike. */
export const LOOKALIKE = 2;

/** How raw header name `raw` stands to `name` (lower case): another name, the same, or a lookalike. Allocates nothing. */
export function relation(raw: string, name: string): number {
  if (raw.length !== name.length) return UNRELATED;
  let other = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    const n = name.charCodeAt(i);
    if ((c >= 65 && c <= 90 ? c + 32 : c) === n) continue;
    if (folded(c) !== folded(n)) return UNRELATED;
    other = true;
  }
  return other ? LOOKALIKE : SAME;
}

/**
 * Whether raw header name `raw` reads as `name` (lower case) to a backend
 * that reads `-`, `_` and `.` alike, while spelt otherwise than `name` (in
 * any case). Allocates nothing.
 */
export function isLookalike(raw: string, name: string): boolean {
  return relation(raw, name) === LOOKALIKE;
}

/** Whether raw header name `raw` starts with `prefix` (lower case) as such a backend reads it (`X_Envoy_` for `x-envoy-`). Allocates nothing. */
export function readsAsPrefix(raw: string, prefix: string): boolean {
  if (raw.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) {
    if (folded(raw.charCodeAt(i)) !== folded(prefix.charCodeAt(i))) return false;
  }
  return true;
}

/**
 * Drops from a request, parsed and raw, every header spelt as a lookalike of
 * `name` (lower case). Allocates nothing when there is none.
 */
export function dropLookalikesOf(req: IncomingMessage, name: string): void {
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) {
    if (!isLookalike(raw[i], name)) continue;
    delete req.headers[raw[i].toLowerCase()];
    raw.splice(i, 2);
  }
}

/**
 * Drops from a request, parsed and raw, every header spelt as a lookalike of
 * one of `names` (lower case), unless it is one of `names` itself: a
 * configuration may name both `x_zone` and `x-zone`. Allocates nothing when
 * there is none.
 */
export function dropLookalikes(req: IncomingMessage, names: readonly string[]): void {
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) {
    let lookalike = false;
    for (let j = 0; j < names.length; j++) {
      const seen = relation(raw[i], names[j]);
      if (seen === SAME) {
        lookalike = false;
        break;
      }
      if (seen === LOOKALIKE) lookalike = true;
    }
    if (!lookalike) continue;
    delete req.headers[raw[i].toLowerCase()];
    raw.splice(i, 2);
  }
}
