/**
 * @module gateway/dispatch
 * In-process routing: a module's Koa app, composed once, to run on the
 * gateway's own context as koa-mount runs a mounted app.
 */
import type Koa from 'koa';
import type { Context } from 'koa';
import compose from 'koa-compose';
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
