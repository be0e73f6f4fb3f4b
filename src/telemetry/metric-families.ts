/**
 * @module telemetry/metric-families
 * The metric families of a gateway: each counter and histogram with its
 * name, help text, labels and buckets, registered in the gateway's registry.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { droppedLogLines, type Logger } from './logger';

/** Request and database call duration buckets, in seconds. */
const DEFAULT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The counters and histograms of a gateway. */
export interface MetricFamilies {
  readonly httpRequests: Counter<'route' | 'method' | 'status' | 'protocol'>;
  readonly httpRequestDuration: Histogram<'route' | 'method'>;
  readonly authDecisions: Counter<'result'>;
  readonly rateLimitDecisions: Counter<'result'>;
  readonly upstreamErrors: Counter<'route' | 'kind'>;
  readonly upstreamRetries: Counter<'route'>;
  readonly upstreamOverflows: Counter<'cluster' | 'limit'>;
  readonly upstreamEjections: Counter<'cluster'>;
  readonly configReloads: Counter<'result'>;
  readonly databaseCallDuration: Histogram<'operation'>;
  readonly databaseErrors: Counter<'operation' | 'kind'>;
  readonly logLinesDropped: Counter<'destination'>;
}

/** What the families are made with. */
export interface MetricFamilyOptions {
  /** Put in front of every metric name. */
  readonly prefix: string;
  readonly registry: Registry;
  /** Request duration histogram buckets, in seconds. */
  readonly durationBuckets?: number[];
  /** The process logger, whose dropped lines are counted. */
  readonly logger?: Logger;
  /** Called at each scrape by the families recorded into through pending counts: they flush them. */
  readonly collect: () => void;
}

/** Makes the metric families of a gateway in `options.registry`. */
export function createMetricFamilies(options: MetricFamilyOptions): MetricFamilies {
  const { prefix, collect } = options;
  const registers = [options.registry];
  const httpRequests = new Counter({
    name: `${prefix}http_requests_total`,
    help: 'HTTP requests answered, by mapping name, method, status and protocol (HTTP/1.1, HTTP/2).',
    labelNames: ['route', 'method', 'status', 'protocol'] as const,
    registers,
    collect,
  });
  const httpRequestDuration = new Histogram({
    name: `${prefix}http_request_duration_seconds`,
    help: 'Time from receiving a request to the end of its response, by mapping name and method.',
    labelNames: ['route', 'method'] as const,
    buckets: options.durationBuckets ?? DEFAULT_BUCKETS,
    registers,
    collect,
  });
  const authDecisions = new Counter({
    name: `${prefix}auth_decisions_total`,
    help: 'Auth stage outcomes: allowed, denied, error (service failed), bypassed (bypass_auth).',
    labelNames: ['result'] as const,
    registers,
    collect,
  });
  const rateLimitDecisions = new Counter({
    name: `${prefix}ratelimit_decisions_total`,
    help: 'Rate-limit stage outcomes: ok, over_limit, error (service failed).',
    labelNames: ['result'] as const,
    registers,
    collect,
  });
  const upstreamErrors = new Counter({
    name: `${prefix}upstream_errors_total`,
    help: 'Failed forwards to remote upstreams, by mapping name and kind: timeout, refused (not connected, or a name that does not resolve), other.',
    labelNames: ['route', 'kind'] as const,
    registers,
  });
  const upstreamRetries = new Counter({
    name: `${prefix}upstream_retries_total`,
    help: 'Requests sent to a remote upstream again (retry_policy), by mapping name.',
    labelNames: ['route'] as const,
    registers,
  });
  const upstreamOverflows = new Counter({
    name: `${prefix}upstream_overflows_total`,
    help: 'Requests answered 503 and retries not made because a circuit breaker was open, by upstream cluster and limit: max_pending_requests, max_requests, max_retries.',
    labelNames: ['cluster', 'limit'] as const,
    registers,
  });
  const upstreamEjections = new Counter({
    name: `${prefix}upstream_ejections_total`,
    help: 'Endpoints ejected from an upstream cluster after failing 5 times in a row, by cluster.',
    labelNames: ['cluster'] as const,
    registers,
  });
  const configReloads = new Counter({
    name: `${prefix}config_reloads_total`,
    help: 'Configuration reloads: success (applied) or failure (rejected, the old one kept).',
    labelNames: ['result'] as const,
    registers,
  });
  const databaseCallDuration = new Histogram({
    name: `${prefix}database_call_duration_seconds`,
    help: 'Calls to the bookings database, failed ones included, by operation: get, list, create, cancel, seed, migrate, ready, purge.',
    labelNames: ['operation'] as const,
    buckets: options.durationBuckets ?? DEFAULT_BUCKETS,
    registers,
  });
  const databaseErrors = new Counter({
    name: `${prefix}database_errors_total`,
    help: 'Failed calls to the bookings database, by operation and kind: timeout, unavailable (unreachable, refused), error (the call failed).',
    labelNames: ['operation', 'kind'] as const,
    registers,
  });
  const logger = options.logger;
  // Read off the logger's destination at each scrape: it counts lines as it drops them, on the hot path.
  let droppedBefore = 0;
  const logLinesDropped = new Counter({
    name: `${prefix}log_lines_dropped_total`,
    help: 'Log lines dropped because their destination could not take them (a full disk, a reader that stopped or left), by destination: stdout, file, fd.',
    labelNames: ['destination'] as const,
    registers,
    collect() {
      const dropped = logger === undefined ? undefined : droppedLogLines(logger);
      if (dropped === undefined) return;
      this.labels(dropped.name).inc(dropped.droppedLines - droppedBefore);
      droppedBefore = dropped.droppedLines;
    },
  });
  return {
    httpRequests,
    httpRequestDuration,
    authDecisions,
    rateLimitDecisions,
    upstreamErrors,
    upstreamRetries,
    upstreamOverflows,
    upstreamEjections,
    configReloads,
    databaseCallDuration,
    databaseErrors,
    logLinesDropped,
  };
}
