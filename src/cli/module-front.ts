/**
 * @module cli/module-front
 * What stands in front of a module served alone, as the gateway's app stands
 * in front of it under `gatehouse start`: the access log (one line a request,
 * the request id both ways, the request metrics), liveness and readiness at
 * the gateway's paths (`/gateway/v0/check_alive`, `/gateway/v0/check_ready`),
 * and the metrics at its path: the process's, and a booking service's calls
 * to its database.
 */
import Koa from 'koa';
import compose from 'koa-compose';
import mount from 'koa-mount';
import { METRICS_PATH, type Rejected } from '../gatehouse';
import { ALIVE_PATH, answerHealth, READY_PATH } from '../gateway';
import { errorHandler, leanKoa } from '../http';
import { accessLog, metricsHandler, rejectedRequestLog, type Logger, type Metrics } from '../telemetry';

/** A module's request listener, and what to tell of the requests answered before it. */
export interface ModuleFront {
  /** Koa's listener: it answers its own failures, so the promise it returns never rejects. */
  readonly listener: ReturnType<Koa['callback']>;
  readonly onRejected: (request: Rejected) => void;
}

/**
 * `module` (named `name` in the log's and the metrics' `route`) behind the
 * access log, with {@link METRICS_PATH} answered from `metrics`, and the
 * health paths: ready while `ready` resolves (it rejects with why not).
 */
export function moduleFront(
  name: string,
  module: Koa,
  metrics: Metrics,
  logger: Logger,
  ready: () => Promise<void> | void,
): ModuleFront {
  const route = { name };
  const health: Koa.Middleware = (ctx) =>
    answerHealth(ctx, ctx.path, async () => {
      await ready();
      return { status: 'ready', module: name };
    });
  const serveHealth: (ctx: Koa.Context, next: Koa.Next) => Promise<void> = compose([errorHandler(), health]);
  const app = leanKoa(new Koa());
  app.silent = true;
  app.proxy = module.proxy;
  app.use(accessLog({ logger, metrics }));
  const serveMetrics: (ctx: Koa.Context, next: Koa.Next) => Promise<void> = compose([
    errorHandler(),
    metricsHandler(metrics),
  ]);
  app.use((ctx, next) => {
    if (ctx.path === METRICS_PATH) return serveMetrics(ctx, next);
    if (ctx.path === ALIVE_PATH || ctx.path === READY_PATH) return serveHealth(ctx, next);
    ctx.state.mapping = route;
    return next();
  });
  app.use(mount(module));
  return { listener: app.callback(), onRejected: rejectedRequestLog({ logger, metrics }) };
}
