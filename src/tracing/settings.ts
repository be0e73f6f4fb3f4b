/**
 * @module tracing/settings
 * What tracing is built from, once the `OTEL_*` options and a
 * TracingService record are read and merged (see gatehouse/tracing): where
 * spans go and how, which requests are sampled, which headers carry the
 * context, what every span says of the gateway.
 */

/** The OTLP transports, as `OTEL_EXPORTER_OTLP_PROTOCOL` names them. */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** The samplers of `OTEL_TRACES_SAMPLER`. */
export const SAMPLERS = [
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
  'always_on',
  'always_off',
  'traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** The propagators of `OTEL_PROPAGATORS`: W3C trace context, W3C baggage, B3 single- and multi-header, none. */
export const PROPAGATORS = ['tracecontext', 'baggage', 'b3', 'b3multi', 'none'] as const;
export type PropagatorName = (typeof PROPAGATORS)[number];

/** How spans wait to be exported: the batch processor's settings (`OTEL_BSP_*`). */
export interface BatchSettings {
  /** How long spans wait to be sent in a batch, in ms. */
  readonly scheduleDelayMs: number;
  /** How long one export may take before the next batch goes, in ms. */
  readonly exportTimeoutMs: number;
  /** The most spans waiting; one more is dropped and counted. */
  readonly maxQueueSize: number;
  /** The most spans sent in one export. */
  readonly maxExportBatchSize: number;
}

/** A span attribute read from each request's header of that name, or `fallback` when it has none. */
export interface HeaderTag {
  readonly tag: string;
  /** Lower case; `:authority`, `:path`, `:method` and `:scheme` read what HTTP/2 calls so. */
  readonly header: string;
  readonly fallback?: string;
}

/** Everything tracing is built from. */
export interface TracingSettings {
  /** The collector: a URL (`http://collector:4318/v1/traces` over HTTP, `http://collector:4317` over gRPC). */
  readonly endpoint: string;
  readonly protocol: OtlpProtocol;
  /** Sent with every export (an API key): never logged. */
  readonly headers: Readonly<Record<string, string>>;
  /** How long one export request may take, in ms. */
  readonly timeoutMs: number;
  /** `service.name` of every span. */
  readonly serviceName: string;
  /** More resource attributes (`OTEL_RESOURCE_ATTRIBUTES`). */
  readonly resource: Readonly<Record<string, string>>;
  readonly sampler: SamplerName;
  /** The ratio of the `traceidratio` samplers, from 0 to 1. */
  readonly ratio: number;
  /** In the order they are read; the last to find a context wins. */
  readonly propagators: readonly PropagatorName[];
  readonly batch: BatchSettings;
  /** Attributes every SERVER span carries (a TracingService's literal and environment tags). */
  readonly tags: Readonly<Record<string, string>>;
  /** Attributes read from request headers (a TracingService's request_header tags). */
  readonly headerTags: readonly HeaderTag[];
}

/** The batch processor's defaults, the specification's. */
export const DEFAULT_BATCH: BatchSettings = Object.freeze({
  scheduleDelayMs: 5000,
  exportTimeoutMs: 30_000,
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
});

/** Whether two settings build the same tracing: a reload that changes nothing keeps what runs. */
export function sameSettings(a: TracingSettings | null, b: TracingSettings | null): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
