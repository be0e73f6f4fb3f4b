/**
 * @module workers/gather
 * One scrape of `/gateway/v0/metrics` counts every worker: the worker that
 * is asked asks the main thread, which collects each worker's metrics and
 * sums them with prom-client's AggregatorRegistry, as for node:cluster.
 */
import type { WorkerMetrics } from './messages';

type PromClient = typeof import('prom-client');

/** How long a worker may take to send its metrics before a scrape goes on without them, in ms. */
export const COLLECT_TIMEOUT_MS = 2000;

/** The text of the sum of `collected`, the metrics of each worker that answered. */
export async function summedMetrics(collected: readonly WorkerMetrics[]): Promise<string> {
  // Loaded at the first scrape: the main thread serves nothing else that needs it.
  const { AggregatorRegistry } = require('prom-client') as PromClient;
  return AggregatorRegistry.aggregate(collected as WorkerMetrics[]).metrics();
}

/** Collects from every worker in `askers` (each resolves its worker's metrics), leaving out one that does not answer in time. */
export async function collectAll(askers: readonly (() => Promise<WorkerMetrics>)[]): Promise<WorkerMetrics[]> {
  const late = Symbol('late');
  const answers = await Promise.all(
    askers.map((ask) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<typeof late>((resolve) => {
        timer = setTimeout(() => resolve(late), COLLECT_TIMEOUT_MS);
      });
      return Promise.race([ask().catch(() => late), timeout]).finally(() => clearTimeout(timer));
    }),
  );
  return answers.filter((a): a is WorkerMetrics => a !== late);
}
