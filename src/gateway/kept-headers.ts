/**
 * @module gateway/kept-headers
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

/** The kept headers the response has now, as name, value pairs; null when it has none. */
export function keptHeaders(res: ServerResponse): unknown[] | null {
  let kept: unknown[] | null = null;
  for (let i = 0; i < KEPT_HEADERS.length; i++) {
    const value = res.getHeader(KEPT_HEADERS[i]);
    if (value !== undefined) (kept ??= []).push(KEPT_HEADERS[i], value);
  }
  return kept;
}

/** Puts back the kept headers a module removed; `Vary` gets back the tokens it lost. */
export function restoreHeaders(ctx: Context, kept: unknown[]): void {
  const res = ctx.res;
  for (let i = 0; i < kept.length; i += 2) {
    const name = kept[i] as string;
    if (name === 'Vary') ctx.vary(String(kept[i + 1]).split(/\s*,\s*/));
    else if (!res.hasHeader(name)) res.setHeader(name, kept[i + 1] as string);
  }
}
