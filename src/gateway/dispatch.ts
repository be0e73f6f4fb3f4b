/**
 * @module gateway/dispatch
 * In-process routing: a module's Koa app runs on the gateway's own context,
 * as koa-mount runs a mounted app, with the rewritten path in `ctx.path` for
 * the time it runs.
 */
import type Koa from 'koa';
import type { Context } from 'koa';
import compose from 'koa-compose';
import { setPath } from '../http';
import type { GatehouseModule } from './module';

/** A module's middleware, composed once. */
export type ModuleHandler = (ctx: Context) => Promise<void>;

function done(): Promise<void> {
  return Promise.resolve();
}

/** Composes the middleware of a module's app into one handler. */
export function moduleHandler(module: GatehouseModule & { app: Koa }): ModuleHandler {
  const composed = compose(module.app.middleware as compose.Middleware<Context>[]);
  return (ctx) => composed(ctx, done);
}

/**
 * Runs `handler` with `ctx.path` set to `path`; the path the gateway saw is
 * back in place afterwards, whatever happened.
 */
export async function dispatchInProcess(ctx: Context, handler: ModuleHandler, path: string): Promise<void> {
  const seen = ctx.path;
  if (path !== seen) setPath(ctx, path);
  try {
    await handler(ctx);
  } finally {
    setPath(ctx, seen);
  }
}
