/**
 * @module tracing/export/messages
 * What the gateway's thread and the export thread say to each other: a
 * serialized batch of spans to send, a flush, a stop; each answered once, by its id.
 */
import type { SerializedBatch } from './exporter';

/** What the export thread is asked: to send spans, to flush, to stop. */
export type ExportThreadAsk =
  { readonly batch: SerializedBatch } | { readonly flush: true } | { readonly shutdown: true };

/** To the export thread: an ask, and the id its answer comes back with. */
export type ToExportThread = ExportThreadAsk & { readonly id: number };

/** From the export thread: how the request of `id` ended. */
export interface FromExportThread {
  readonly id: number;
  readonly ok: boolean;
  /** Why it failed, in words (never the export's headers). */
  readonly error?: string;
}
