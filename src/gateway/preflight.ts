/**
 * @module gateway/preflight
 * CORS preflights at the gateway: telling one from a plain OPTIONS request,
 * the method it asks about (which routes it), and its answer by the
 * route's (or the Module's) CORS policy, before auth: browsers send no
 * credentials with one.
 */
import type { Context, Middleware } from 'koa';
import { basePath, ORIGINAL_PATH } from '../http';
import type { Route } from './match/route-table';
import type { RouteTarget } from './types';

/** Whether a request is a CORS preflight. */
export function isPreflight(method: string, headers: Context['req']['headers']): boolean {
  return method === 'OPTIONS' && headers.origin !== undefined && headers['access-control-request-method'] !== undefined;
}

/** What a preflight asks to send, as a route's `method` is spelled. */
export function requestedMethod(ctx: Context): string {
  return String(ctx.req.headers['access-control-request-method']).toUpperCase();
}

function nothing(): Promise<void> {
  return Promise.resolve();
}

/** Answers a CORS preflight with `cors`, without auth: browsers send no credentials with one. */
export function answerPreflight(
  ctx: Context,
  cors: Middleware,
  route: Route<RouteTarget> | undefined,
  path: string,
): Promise<void> {
  if (route) ctx.state.mapping = route.mapping;
  ctx.state[ORIGINAL_PATH] = ctx.originalUrl === ctx.url ? path : basePath(ctx) + path;
  return cors(ctx, nothing) as Promise<void>;
}
