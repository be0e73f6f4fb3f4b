/**
 * @module telemetry/metrics-handler
 * The Koa handler that serves a gateway's metrics to a scrape.
 */
import type { Middleware } from 'koa';
import { HttpError } from '../http';
import { METRICS_ROUTE, type Metrics } from './metrics';

/**
 * Serves the text exposition of the registry to GET and HEAD; other methods
 * get a 405 {@link HttpError} with `Allow`, for the error handler in front
 * of it to answer with the error body. Mount it where the metrics are to be
 * scraped.
 */
export function metricsHandler(metrics: Pick<Metrics, 'registry' | 'exposition'>): Middleware {
  const { registry } = metrics;
  return async function serveMetrics(ctx) {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw HttpError.of('METHOD_NOT_ALLOWED', { headers: { Allow: 'GET, HEAD' } });
    }
    ctx.state.route = METRICS_ROUTE;
    const text = await metrics.exposition();
    ctx.body = text;
    ctx.set('Content-Type', registry.contentType);
    ctx.set('Cache-Control', 'no-store');
  };
}
