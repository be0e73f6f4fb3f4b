/**
 * @module gateway/module-handler
 * In-process routing: a module's Koa app, composed once, to run on the
 * gateway's own context as koa-mount runs a mounted app; and the apps it
 * mounts, entered straight.
 */
import type Koa from 'koa';
import type { Context } from 'koa';
import compose from 'koa-compose';
import { setPath } from '../http';
import type { GatehouseModule } from './module';

/**
 * A module's middleware, composed once. It may change the path (to enter a
 * mounted app); the gateway puts its own back when the module is done.
 */
export type ModuleHandler = (ctx: Context) => Promise<void>;

const SLASH = 47;

function done(): Promise<void> {
  return Promise.resolve();
}

interface Mounted {
  readonly prefix: string;
  readonly run: compose.ComposedMiddleware<Context>;
}

function composed(app: Koa): compose.ComposedMiddleware<Context> {
  return compose(app.middleware as compose.Middleware<Context>[]);
}

/**
 * Composes the middleware of a module's app into one handler. A path under
 * one of the module's `mounts` runs that app with the prefix stripped, as
 * koa-mount in front of it would, without going through the module's app.
 */
export function moduleHandler(module: GatehouseModule & { app: Koa }): ModuleHandler {
  const whole = composed(module.app);
  const mounted: Mounted[] = Object.entries(module.mounts ?? {}).map(([prefix, app]) => {
    if (!prefix.startsWith('/') || prefix.endsWith('/')) {
      throw new Error(
        `module ${module.name}: a mount prefix starts with a slash and does not end with one: '${prefix}'`,
      );
    }
    return { prefix, run: composed(app) };
  });
  if (mounted.length === 0) return (ctx) => whole(ctx, done);
  return (ctx) => {
    const path = ctx.path;
    for (let i = 0; i < mounted.length; i++) {
      const { prefix, run } = mounted[i];
      if (path.charCodeAt(prefix.length) === SLASH && path.startsWith(prefix)) {
        (ctx as Context & { mountPath?: string }).mountPath = prefix;
        setPath(ctx, path.slice(prefix.length));
        return run(ctx, done);
      }
    }
    return whole(ctx, done);
  };
}
