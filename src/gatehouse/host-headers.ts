/**
 * @module gatehouse/host-headers
 * The response headers a host app set before the mounted Gatehouse, kept on
 * its error answers.
 */
import type Koa from 'koa';
import type { Middleware } from 'koa';

/**
 * Every error handler of the gateway and its modules clears the headers of a
 * failed response, which are the handler's own when Gatehouse runs alone. Mounted
 * in a host app, the response also holds what the host's middleware set before
 * it (a request id, security or CORS headers): those are put back on a 4xx or
 * 5xx that lost them. A success keeps the gateway's word, response edits included.
 * Costs nothing when `app` is not mounted.
 */
export function keepHostHeaders(app: Koa): Middleware {
  return async function keepHost(ctx, next) {
    if (ctx.app === app) return next();
    const res = ctx.res;
    const names = res.getHeaderNames();
    if (names.length === 0) return next();
    const host = names.map((name) => [name, res.getHeader(name)] as const);
    try {
      await next();
    } finally {
      if (ctx.status >= 400 && !ctx.headerSent) {
        for (const [name, value] of host) if (value !== undefined && !res.hasHeader(name)) res.setHeader(name, value);
      }
    }
  };
}
