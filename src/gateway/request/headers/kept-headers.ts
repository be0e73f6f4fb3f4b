/**
 * @module gateway/request/headers/kept-headers
 * Headers the gateway sets on a response before an in-process module runs,
 * put back when the module's own error handler cleared them.
 */
import type { Context } from 'koa';
import type { ServerResponse } from 'node:http';

/**
 * Headers the gateway sets before a module runs that must outlive the
 * module's own error handler (which clears the headers of a failed response):
 * CORS, so that the error is readable cross-origin, and the rate-limit answer.
 */
const KEPT_HEADERS = [
  'Access-Control-Allow-Origin',
  'Access-Control-Allow-Credentials',
  'Access-Control-Expose-Headers',
  'RateLimit',
  'RateLimit-Policy',
  'Vary',
];

/** The same in lower case: Node looks a name up in lower case, and makes a lower-case copy of any other. */
const KEPT_KEYS = KEPT_HEADERS.map((name) => name.toLowerCase());
const VARY = KEPT_HEADERS.indexOf('Vary');

/** The kept headers the response has now, as (index, value) pairs; null when it has none. */
export function keptHeaders(res: ServerResponse): unknown[] | null {
  let kept: unknown[] | null = null;
  for (let i = 0; i < KEPT_KEYS.length; i++) {
    const value = res.getHeader(KEPT_KEYS[i]);
    if (value !== undefined) (kept ??= []).push(i, value);
  }
  return kept;
}

/** Puts back the kept headers a module removed; `Vary` gets back the tokens it lost. */
export function restoreHeaders(ctx: Context, kept: unknown[]): void {
  const res = ctx.res;
  for (let i = 0; i < kept.length; i += 2) {
    const at = kept[i] as number;
    if (at === VARY) ctx.vary(String(kept[i + 1]).split(/\s*,\s*/));
    else if (!res.hasHeader(KEPT_KEYS[at])) res.setHeader(KEPT_HEADERS[at], kept[i + 1] as string);
  }
}
