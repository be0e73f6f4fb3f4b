/**
 * @module gateway/own-paths
 * The gateway's own paths, open to every client and routed before any
 * Mapping: liveness (`/gateway/v0/check_alive`) and readiness
 * (`/gateway/v0/check_ready`), as Emissary serves them.
 */
import type { Context } from 'koa';
import { HttpError } from '../http';
import type { Runtime } from './runtime';

/** What every own path starts with: a request path that does not is none of them, at the cost of one comparison. */
export const OWN_PREFIX = '/gateway/v0/check_';
const ALIVE = '/gateway/v0/check_alive';
const READY = '/gateway/v0/check_ready';

/**
 * Answers the own paths: `answer(ctx, path)` resolves true when it answered
 * `path` (normalised), false when `path` is none of them. Readiness needs a
 * configuration (`runtime()`), and `readiness` to resolve when there is one.
 */
export function ownPaths(runtime: () => Runtime | null, readiness?: () => Promise<void> | void): (ctx: Context, path: string) => Promise<boolean> {
  return async (ctx, path) => {
    if (path !== ALIVE && path !== READY) return false;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new HttpError(405, undefined, { headers: { Allow: 'GET, HEAD' } });
    }
    ctx.set('Cache-Control', 'no-store');
    if (path === ALIVE) {
      ctx.body = { status: 'alive' };
      return true;
    }
    const rt = runtime();
    if (rt === null) throw new HttpError(503, 'no configuration is loaded');
    if (readiness) {
      try {
        await readiness();
      } catch (err) {
        throw new HttpError(503, `not ready: ${(err as Error)?.message ?? String(err)}`, { headers: { 'Cache-Control': 'no-store' } });
      }
    }
    ctx.body = { status: 'ready', routes: rt.table.routes.length, loaded_at: rt.snapshot.loadedAt };
    return true;
  };
}
