/**
 * @module gatehouse/serving/host-headers
 * The response headers a host app set before the mounted Gatehouse, kept on
 * its error answers.
 */
import type Koa from 'koa';
import type { Context, Middleware, Next } from 'koa';
import type { ServerResponse } from 'node:http';

/** Every outgoing message has it (Node 15.13); @types/node declares it on ClientRequest alone. */
type WithRawNames = ServerResponse & { getRawHeaderNames(): string[] };

/**
 * Every error handler of the gateway and its modules clears the headers of a
 * failed response, which are the handler's own when Gatehouse runs alone. Mounted
 * in a host app, the response also holds what the host's middleware set before
 * it (a request id, security or CORS headers): those are put back on a 4xx or
 * 5xx that lost them. A success keeps the gateway's word, response edits included.
 * Costs nothing when `app` is not mounted.
 */
export function keepHostHeaders(app: Koa): Middleware {
  // Not async itself: running alone (every request of a standalone Gatehouse)
  // it hands over at once, with no promise of its own to resolve.
  return function keepHost(ctx, next) {
    if (ctx.app === app) return next();
    const res = ctx.res;
    // As the host spelt them: getHeaderNames() has them in lower case.
    const names = (res as WithRawNames).getRawHeaderNames();
    if (names.length === 0) return next();
    return keepAround(ctx, next, names.map((name) => [name, res.getHeader(name)] as const));
  };
}

/** Runs the rest, then puts the host's headers back on an error answer that lost them. */
async function keepAround(ctx: Context, next: Next, host: readonly (readonly [string, ReturnType<ServerResponse['getHeader']>])[]): Promise<void> {
  const res = ctx.res;
  try {
    await next();
  } finally {
    if (ctx.status >= 400 && !ctx.headerSent) {
      for (const [name, value] of host) if (value !== undefined && !res.hasHeader(name)) res.setHeader(name, value);
    }
  }
}
