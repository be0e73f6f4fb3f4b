/**
 * @module test/support/gateway-stand-in
 * Serves a module's app the way the gateway does: under a prefix, with the
 * client's path recorded in `ctx.state` and the rewritten path in `ctx.path`.
 */
import Koa from 'koa';
import type { Context, Middleware } from 'koa';
import { ORIGINAL_PATH } from '../../src/http';

/** An app that routes `prefix` and everything below it to `inner` with the default rewrite. */
export function routedUnder(prefix: string, inner: Koa): Koa {
  const middleware = inner.middleware as Middleware[];
  const handler = (ctx: Context) => {
    const step = (i: number): Promise<void> =>
      i < middleware.length ? Promise.resolve(middleware[i](ctx, () => step(i + 1))) : Promise.resolve();
    return step(0);
  };
  const app = new Koa();
  app.silent = true;
  app.use(async (ctx, next) => {
    const path = ctx.path;
    if (path !== prefix && !path.startsWith(`${prefix}/`)) return next();
    ctx.state[ORIGINAL_PATH] = path;
    ctx.state.mapping = { name: 'diag' };
    ctx.path = path.slice(prefix.length) || '/';
    try {
      await handler(ctx);
    } finally {
      ctx.path = path;
    }
  });
  return app;
}
