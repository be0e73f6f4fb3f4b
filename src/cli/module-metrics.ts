/**
 * @module cli/module-metrics
 * The metrics of a module served alone, on its own port at the path where
 * `gatehouse start` answers them: the process's, and a booking service's
 * calls to its database.
 */
import Koa from 'koa';
import type { RequestListener } from 'node:http';
import { METRICS_PATH } from '../gatehouse';
import { errorHandler, leanKoa } from '../http';
import { metricsHandler, type Metrics } from '../telemetry';

/** Whether a request target asks for the metrics path (with a query or not). */
function asksForMetrics(target: string | undefined): boolean {
  if (target === undefined || !target.startsWith(METRICS_PATH)) return false;
  return target.length === METRICS_PATH.length || target[METRICS_PATH.length] === '?';
}

/** `serveModule`, with {@link METRICS_PATH} answered from `metrics` in front of it. */
export function withMetricsPath(serveModule: RequestListener, metrics: Pick<Metrics, 'registry'>): RequestListener {
  const app = leanKoa(new Koa());
  app.silent = true;
  app.use(errorHandler());
  app.use(metricsHandler(metrics));
  const serveMetrics = app.callback();
  return (req, res) => (asksForMetrics(req.url) ? serveMetrics(req, res) : serveModule(req, res));
}
