/**
 * @module tracing/export/queue
 * The bounded way out of the process: spans wait in the batch processor's
 * queue for one export at a time; a span that finds `maxQueueSize` spans
 * waiting or on their way is dropped and counted, and so is every span of
 * an export that failed (a dead or slow collector). Requests never wait for
 * the collector, and what waits for it never grows past the bound.
 */
import { TraceFlags, type Context } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/** What became of the spans ended: exported, or dropped and why. */
export interface ExportCounts {
  exported: number;
  /** Dropped at once: `maxQueueSize` spans were already waiting. */
  queueFull: number;
  /** Dropped with their export: the collector refused them, failed, or did not answer in time. */
  exportFailed: number;
}

/** Counts each export's spans, exported or failed, and tells `settled` how many are no longer waiting. */
export class CountingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly counts: ExportCounts,
    private readonly settled: (spans: number) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    let told = false;
    const tell = (result: ExportResult) => {
      if (told) return;
      told = true;
      if (result.code === ExportResultCode.SUCCESS) this.counts.exported += spans.length;
      else this.counts.exportFailed += spans.length;
      this.settled(spans.length);
      done(result);
    };
    try {
      this.inner.export(spans, tell);
    } catch (err) {
      tell({ code: ExportResultCode.FAILED, error: err as Error });
    }
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * Hands sampled spans to the batch processor while fewer than `max` wait
 * (queued or being exported); drops and counts the others.
 */
export class BoundedProcessor implements SpanProcessor {
  private waiting = 0;

  constructor(
    private readonly inner: SpanProcessor,
    private readonly max: number,
    private readonly counts: ExportCounts,
  ) {}

  /** Spans that left the queue, exported or not. */
  settled(spans: number): void {
    this.waiting = Math.max(0, this.waiting - spans);
  }

  onStart(_span: Span, _context: Context): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.waiting >= this.max) {
      this.counts.queueFull++;
      return;
    }
    this.waiting++;
    this.inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}
