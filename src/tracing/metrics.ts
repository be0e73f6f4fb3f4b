/**
 * @module tracing/metrics
 * What became of the spans, for Prometheus: exported, and dropped by
 * reason (`queue_full`: the export queue was full; `export_failed`: the
 * collector refused, failed or did not answer). Read from the counts at
 * each scrape, so that nothing is counted on the request path.
 */
import { Counter, type Registry } from 'prom-client';
import type { ExportCounts } from './export';

/** Registers the span counters in `registry`, read from `counts` when scraped. */
export function registerTraceMetrics(
  registry: Registry,
  counts: () => Readonly<ExportCounts>,
  prefix = 'gatehouse_',
): void {
  let exportedBefore = 0;
  new Counter({
    name: `${prefix}trace_spans_exported_total`,
    help: 'Spans the collector took.',
    registers: [registry],
    collect() {
      const now = counts().exported;
      this.inc(now - exportedBefore);
      exportedBefore = now;
    },
  });
  const before = { queue_full: 0, export_failed: 0 };
  const dropped = new Counter({
    name: `${prefix}trace_spans_dropped_total`,
    help: 'Spans dropped, by reason: queue_full (the export queue was full), export_failed (the collector refused them, failed or did not answer in time).',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      const now = counts();
      const queueFull = now.queueFull - before.queue_full;
      const exportFailed = now.exportFailed - before.export_failed;
      dropped.labels('queue_full').inc(queueFull);
      dropped.labels('export_failed').inc(exportFailed);
      before.queue_full = now.queueFull;
      before.export_failed = now.exportFailed;
    },
  });
}
