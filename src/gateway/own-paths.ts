/**
 * @module gateway/own-paths
 * The gateway's own paths, open to every client and routed before any
 * Mapping: liveness (`/gateway/v0/check_alive`) and readiness
 * (`/gateway/v0/check_ready`), as Emissary serves them.
 */
import type { Context } from 'koa';
import { HttpError } from '../http';
import type { Runtime } from './types';

/** What every own path starts with: a request path that does not is none of them, at the cost of one comparison. */
export const OWN_PREFIX = '/gateway/v0/check_';
export const ALIVE_PATH = '/gateway/v0/check_alive';
export const READY_PATH = '/gateway/v0/check_ready';
/**
 * The route name liveness and readiness probes are logged and counted
 * under: a load balancer's probes are no requests that matched nothing.
 */
export const HEALTH_ROUTE = 'gateway-health';

/** What readiness may add to its body: `config`, the version of the files served, which every worker of a gateway shares. */
export type ReadyFields = Readonly<Record<string, string | number>>;

/**
 * Answers liveness or readiness (`path`, normalised, is one of them):
 * alive at once, ready with the body `ready` resolves, or a 503 saying why
 * not when it rejects (an {@link HttpError} it throws goes as it is). The
 * gateway and a module served alone answer them alike.
 */
export async function answerHealth(ctx: Context, path: string, ready: () => Promise<object> | object): Promise<void> {
  ctx.state.route = HEALTH_ROUTE;
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
    throw HttpError.of('METHOD_NOT_ALLOWED', { headers: { Allow: 'GET, HEAD' } });
  }
  ctx.set('Cache-Control', 'no-store');
  if (path === ALIVE_PATH) {
    ctx.body = { status: 'alive' };
    return;
  }
  try {
    ctx.body = await ready();
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw HttpError.of('NOT_READY', { reason: (err as Error)?.message ?? String(err) });
  }
}

/**
 * Answers the own paths: `answer(ctx, path)` resolves true when it answered
 * `path` (normalised), false when `path` is none of them. Readiness needs a
 * configuration (`runtime()`), and `readiness` to resolve when there is one.
 */
export function ownPaths(
  runtime: () => Runtime | null,
  readiness?: () => Promise<ReadyFields | void> | ReadyFields | void,
): (ctx: Context, path: string) => Promise<boolean> {
  return async (ctx, path) => {
    if (path !== ALIVE_PATH && path !== READY_PATH) return false;
    await answerHealth(ctx, path, async () => {
      const rt = runtime();
      if (rt === null) throw HttpError.of('NO_CONFIGURATION');
      const more = await readiness?.();
      return { status: 'ready', routes: rt.table.routes.length, loaded_at: rt.snapshot.loadedAt, ...more };
    });
    return true;
  };
}
