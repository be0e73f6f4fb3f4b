/**
 * @module gatehouse/root-app
 * The root Koa app of a Gatehouse: the access log and the metrics endpoint
 * in front of the gateway's own middleware, and how an unexpected error is
 * reported (logged, and emitted to the host app when it is mounted in one).
 */
import compose from 'koa-compose';
import Koa, { type Context } from 'koa';
import { dropClaimedUser, type Gateway, type GatewayEvents } from '../gateway';
import { errorHandler, leanKoa } from '../http';
import {
  accessLog,
  logAppErrors,
  logUnexpectedError,
  metricsHandler,
  type Logger,
  type Metrics,
  type RouteCounters,
} from '../telemetry';
import { enterFromHost } from './serving/mounted';

export const METRICS_PATH = '/gateway/v0/metrics';

/** The gateway's events, counted in the metrics. */
export function gatewayEvents(metrics: Metrics): GatewayEvents {
  return {
    authDecision: (outcome) => metrics.recordAuth(outcome),
    rateLimitDecision: (outcome) => metrics.recordRateLimit(outcome),
    upstreamError: (route, failure) => metrics.recordUpstreamError(route, failure),
    upstreamRetry: (route) => metrics.recordUpstreamRetry(route),
    upstreamOverflow: (cluster, limit) => metrics.recordUpstreamOverflow(cluster, limit),
    upstreamEjection: (cluster) => metrics.recordUpstreamEjection(cluster),
  };
}

export interface RootApp {
  readonly app: Koa;
  /** Logs an error no handler expected; mounted, the host's error listeners hear it too, as they hear their own app's. */
  readonly reportUnexpected: (err: unknown, ctx: Context) => void;
  /** Puts the gateway's middleware behind the access log and the metrics. */
  mount(gateway: Gateway): void;
}

/** The root app, empty until the gateway is mounted. */
export function createRootApp(options: {
  trustProxy: boolean;
  logger: Logger;
  metrics: Metrics;
  counters: RouteCounters;
}): RootApp {
  const { logger, metrics, counters } = options;
  // One trusted hop: ctx.ip is the address the proxy wrote last, not the first, which the client wrote.
  const app = leanKoa(new Koa({ proxy: options.trustProxy, maxIpsCount: 1 }));
  app.silent = true;
  const logUnexpected = logUnexpectedError(logger);
  const reportUnexpected = (err: unknown, ctx: Context): void => {
    logUnexpected(err, ctx);
    if (ctx.app !== app) ctx.app.emit('error', err, ctx);
  };
  return {
    app,
    reportUnexpected,
    mount(gateway) {
      // A module routed in process runs on this app's context, so the error its
      // own error handler answers with a bare 500 (a store that failed) is emitted
      // here: silent, the app would drop it, and the cause with it.
      logAppErrors(app, logger);
      // The gateway's error handler is not in front of this path: the metrics get one of their own.
      const serveMetrics = compose([errorHandler({ onUnexpected: reportUnexpected }), metricsHandler(metrics)]);
      app.use(enterFromHost(app, { onUnexpected: reportUnexpected }));
      app.use(accessLog({ logger, metrics, counters }));
      app.use((ctx, next) => {
        if (ctx.request.path !== METRICS_PATH) return next();
        // The gateway drops a client's X-Travel-User itself; this path never reaches it.
        dropClaimedUser(ctx.req);
        return serveMetrics(ctx, next) as Promise<void>;
      });
      // The gateway's middleware in this app's own chain: a nested compose would cost a step more per request.
      for (const middleware of gateway.app.middleware) app.use(middleware);
    },
  };
}
