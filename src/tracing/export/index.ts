/**
 * @module tracing/export
 * The way out of the process for ended spans: a bounded queue in front of
 * the SDK's batch processor (./queue), the official serializer, and the
 * export thread where the official transport sends each batch (./thread).
 */
export { BoundedProcessor, CountingExporter, type ExportCounts } from './queue';
export { ThreadExporter } from './thread';
export type { ExporterSettings } from './exporter';
