/**
 * @module tracing
 * OpenTelemetry tracing of the gateway: W3C trace context (and B3) read
 * from clients and sent on, a SERVER span per request with the stable HTTP
 * semantic conventions and child spans for auth, the rate limit, each
 * upstream try and each database call, exported over OTLP (HTTP with
 * protobuf or JSON, or gRPC) through a bounded queue. The gateway reads one
 * property a request ({@link GatewayTracing.requests}); while it is null,
 * nothing else is made, and OpenTelemetry is not even loaded.
 */
export {
  NO_TRACING,
  RELOAD_SPAN,
  TRACE_STATE,
  traceOf,
  type AttributeValue,
  type ChildKind,
  type ChildSpan,
  type GatewayTracing,
  type HeaderCarrier,
  type RequestTrace,
  type RequestTracer,
  type TraceParent,
} from './types';
export {
  DEFAULT_BATCH,
  OTLP_PROTOCOLS,
  PROPAGATORS,
  SAMPLERS,
  type BatchSettings,
  type HeaderTag,
  type OtlpProtocol,
  type PropagatorName,
  type SamplerName,
  type TracingSettings,
} from './settings';
export { createTracing, type Tracing, type TracingOptions } from './tracing';
export type { ExportCounts } from './export';
export { registerTraceMetrics } from './metrics';
export { REDACTED, SECRET_HEADERS } from './attributes';
