/**
 * @module gatehouse/serving/mounted
 * A request that comes from a host app Gatehouse is mounted in (koa-mount):
 * it runs on the host's context, so what the host set on that context is put
 * aside for the gateway's answer and given back after it.
 */
import type Koa from 'koa';
import type { Context, Middleware, Next } from 'koa';
import type { ServerResponse } from 'node:http';
import { UNEXPECTED_ERROR_LISTENER } from '../../http';
import { forgetExplicitStatus } from '../../platform';

/** Every outgoing message has it (Node 15.13); @types/node declares it on ClientRequest alone. Node's HTTP/2 one has not. */
type WithRawNames = ServerResponse & { getRawHeaderNames?(): string[] };

/** Koa's own mark of a status set by hand, which a body set later does not replace with 200. */

type UnexpectedErrorListener = (err: unknown, ctx: Context) => void;

export interface MountedOptions {
  /** Told of an unexpected error of a module that would emit it on `ctx.app`, the host's: Gatehouse logs it. */
  onUnexpected: UnexpectedErrorListener;
  /** The request header of the request id: a host's own id on the response is taken as the request's. */
  requestIdHeader?: string;
}

/**
 * Mounted, Gatehouse answers as it answers alone:
 * - its `trustProxy` decides whom it believes about the client (the
 *   forwarding headers, `ctx.ip`, `ctx.protocol`, `ctx.host`), not the host's
 *   `proxy`: a host that trusts a proxy of its own would otherwise let a
 *   client's X-Forwarded-Host choose a Mapping that bypasses auth;
 * - its answers have its own status, not one the host set before it;
 * - a request id the host gave the response is the request's, in the log and
 *   to upstreams, rather than a second one;
 * - an unexpected error of a module is logged here as well as heard by the
 *   host's `error` listeners;
 * - the response headers the host set are put back on a 4xx or 5xx whose
 *   error handler cleared them (a success keeps the gateway's word).
 * Costs nothing when `app` is not mounted.
 */
export function enterFromHost(app: Koa, options: MountedOptions): Middleware {
  const idHeader = (options.requestIdHeader ?? 'x-request-id').toLowerCase();
  // Not async itself: running alone (every request of a standalone Gatehouse)
  // it hands over at once, with no promise of its own to resolve.
  return function fromHost(ctx, next) {
    if (ctx.app === app) return next();
    return runMounted(app, ctx, next, options.onUnexpected, idHeader);
  };
}

async function runMounted(
  app: Koa,
  ctx: Context,
  next: Next,
  onUnexpected: UnexpectedErrorListener,
  idHeader: string,
): Promise<void> {
  const request = ctx.request as Koa.Request & { app: Koa };
  const response = ctx.response;
  const res = ctx.res;
  const hostApp = request.app;
  // As the host spelt them: getHeaderNames() has them in lower case.
  const names = (res as WithRawNames).getRawHeaderNames?.() ?? res.getHeaderNames();
  const hostHeaders = names.map((name) => [name, res.getHeader(name)] as const);
  const hostId = res.getHeader(idHeader);
  if (typeof hostId === 'string' && ctx.req.headers[idHeader] === undefined) ctx.req.headers[idHeader] = hostId;
  // Koa reads the proxy settings off the request's app, and remembers the address it worked out from them.
  request.app = app;
  request.ip = '';
  // Koa's status of a context nothing has answered yet.
  if (!ctx.headerSent) {
    res.statusCode = 404;
    forgetExplicitStatus(response);
  }
  (ctx as Context & { [UNEXPECTED_ERROR_LISTENER]?: UnexpectedErrorListener })[UNEXPECTED_ERROR_LISTENER] =
    onUnexpected;
  try {
    await next();
  } finally {
    request.app = hostApp;
    request.ip = '';
    if (ctx.status >= 400 && !ctx.headerSent) {
      for (const [name, value] of hostHeaders)
        if (value !== undefined && !res.hasHeader(name)) res.setHeader(name, value);
    }
  }
}
