/**
 * @module telemetry
 * What operators see of a running gateway: the JSON logger, the access log,
 * Prometheus metrics and the per-route counters of the diagnostic page.
 */
export {
  createLogger,
  DEFAULT_LOG_BACKLOG_BYTES,
  DEFAULT_LOG_FLUSH_MS,
  droppedLogLines,
  logAppErrors,
  logDestination,
  type LogDestination,
  type LogDestinationOptions,
  logUnexpectedError,
  REDACTED_PATHS,
  type Logger,
  type LoggerOptions,
} from './logger';
export {
  createMetrics,
  AUTH_RESULTS,
  RATELIMIT_RESULTS,
  RELOAD_RESULTS,
  UNMATCHED_ROUTE,
  METRICS_ROUTE,
  type Metrics,
  type MetricsOptions,
  type AuthResult,
  type RateLimitResult,
  type UpstreamErrorKind,
  type ReloadResult,
  type DatabaseFailureKind,
} from './metrics';
export { metricsHandler } from './metrics-handler';
export type { CertificateExpiry } from './certificate-metrics';
export {
  createRouteCounters,
  TRAFFIC_MINUTES,
  type RecentCounts,
  type RouteCounters,
  type RouteCountersOptions,
  type RequestCounts,
} from './route-counters';
export {
  accessLog,
  rejectedRequestLog,
  wellFormedRequestId,
  type AccessLogOptions,
  type RejectedRequest,
} from './access-log';
export type { AccessLogEntry } from './access-line';
