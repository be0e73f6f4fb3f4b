/**
 * @module cli/module-front
 * What stands in front of a module served alone, as the gateway's app stands
 * in front of it under `gatehouse start`: the access log (one line a request,
 * the request id both ways, the request metrics) and the metrics, on its own
 * port at the path where `gatehouse start` answers them: the process's, and
 * a booking service's calls to its database.
 */
import Koa from 'koa';
import compose from 'koa-compose';
import mount from 'koa-mount';
import type { RequestListener } from 'node:http';
import { METRICS_PATH, type Rejected } from '../gatehouse';
import { errorHandler, leanKoa } from '../http';
import { accessLog, metricsHandler, rejectedRequestLog, type Logger, type Metrics } from '../telemetry';

/** A module's request listener, and what to tell of the requests answered before it. */
export interface ModuleFront {
  readonly listener: RequestListener;
  readonly onRejected: (request: Rejected) => void;
}

/** `module` (named `name` in the log's and the metrics' `route`) behind the access log, with {@link METRICS_PATH} answered from `metrics`. */
export function moduleFront(name: string, module: Koa, metrics: Metrics, logger: Logger): ModuleFront {
  const route = { name };
  const app = leanKoa(new Koa());
  app.silent = true;
  app.proxy = module.proxy;
  app.use(accessLog({ logger, metrics }));
  const serveMetrics = compose([errorHandler(), metricsHandler(metrics)]);
  app.use((ctx, next) => {
    if (ctx.path === METRICS_PATH) return serveMetrics(ctx, next);
    ctx.state.mapping = route;
    return next();
  });
  app.use(mount(module));
  return { listener: app.callback(), onRejected: rejectedRequestLog({ logger, metrics }) };
}
