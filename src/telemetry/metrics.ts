/**
 * @module telemetry/metrics
 * The Prometheus metrics of a gateway, in a registry of its own (never
 * prom-client's global one, so that several gateways can live in one process),
 * and the handler that serves them.
 */
import type { Middleware } from 'koa';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { HttpError } from '../http';
import { droppedLogLines, type Logger } from './logger';
import { PendingCount, type Pending } from './pending';
import { certificateExpiryGauge, type CertificateExpiry } from './certificate-metrics';

export type AuthResult = 'allowed' | 'denied' | 'error' | 'bypassed';
export type RateLimitResult = 'ok' | 'over_limit' | 'error';
export type UpstreamErrorKind = 'timeout' | 'refused' | 'other';
export type UpstreamLimitKind = 'max_pending_requests' | 'max_requests' | 'max_retries';
export type ReloadResult = 'success' | 'failure';
/** How a database call failed: no answer in time, the database unreachable, or the call itself. */
export type DatabaseFailureKind = 'timeout' | 'unavailable' | 'error';

export const AUTH_RESULTS: readonly AuthResult[] = ['allowed', 'denied', 'error', 'bypassed'];
export const RATELIMIT_RESULTS: readonly RateLimitResult[] = ['ok', 'over_limit', 'error'];
export const RELOAD_RESULTS: readonly ReloadResult[] = ['success', 'failure'];

/** The route label of a request that matched no mapping. */
export const UNMATCHED_ROUTE = 'unmatched';
/** The route label of a scrape of the metrics themselves. */
export const METRICS_ROUTE = 'gateway-metrics';

export interface MetricsOptions {
  /** Put in front of every metric name. Default `gatehouse_`. */
  prefix?: string;
  /** Also collect prom-client's process metrics (CPU, memory, event loop). Default true. */
  processMetrics?: boolean;
  /** Request duration histogram buckets, in seconds. */
  durationBuckets?: number[];
  /** The process logger, whose dropped lines are counted (`log_lines_dropped_total`). */
  logger?: Logger;
  /**
   * How the scraped text is gathered: this registry's own by default. A
   * gateway's workers each sum every worker's, so that one scrape counts them all.
   */
  gather?: (own: Registry) => Promise<string>;
}

/** The metrics of one gateway and shortcuts that record into them without allocating. */
export interface Metrics {
  readonly registry: Registry;
  /** The text a scrape gets: the registry's, or what {@link MetricsOptions.gather} gathers. */
  exposition(): Promise<string>;
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
  /** Counts a finished request (`protocol`: HTTP/1.1 unless said) and observes its duration. */
  recordRequest(route: string, method: string, status: number, seconds: number, protocol?: string): void;
  recordAuth(result: AuthResult): void;
  recordRateLimit(result: RateLimitResult): void;
  recordUpstreamError(route: string, kind: UpstreamErrorKind): void;
  /** A request of the route was sent again (`retry_policy`). */
  recordUpstreamRetry(route: string): void;
  /** A circuit breaker of the cluster turned a request (503) or a retry away. */
  recordUpstreamOverflow(cluster: string, limit: UpstreamLimitKind): void;
  /** An endpoint of the cluster was ejected. */
  recordUpstreamEjection(cluster: string): void;
  recordConfigReload(result: ReloadResult): void;
  /** Observes a call to the bookings database (`create`, `get`...), and counts it when it failed. */
  recordDatabaseCall(operation: string, seconds: number, failure?: DatabaseFailureKind): void;
  /** The certificates in service now, each one's expiry a series (those before are dropped). */
  recordCertificates(certificates: readonly CertificateExpiry[]): void;
}

const DEFAULT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

// Any other method is counted as OTHER, so that a client cannot grow the label set.
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/**
 * Caches of prom-client label children, by label values: `labels()` hashes
 * and allocates on every call. One per arity, so that a lookup takes no
 * array of its arguments.
 */
function childCache2<C>(make: (a: string, b: string) => C): (a: string, b: string) => C {
  const root = new Map<string, Map<string, C>>();
  return (a, b) => {
    let byA = root.get(a);
    if (byA === undefined) root.set(a, (byA = new Map<string, C>()));
    let child = byA.get(b);
    if (child === undefined) byA.set(b, (child = make(a, b)));
    return child;
  };
}

function childCache3<C>(make: (a: string, b: string, c: string) => C): (a: string, b: string, c: string) => C {
  const root = new Map<string, (b: string, c: string) => C>();
  return (a, b, c) => {
    let byA = root.get(a);
    if (byA === undefined) root.set(a, (byA = childCache2((b2, c2) => make(a, b2, c2))));
    return byA(b, c);
  };
}

/** Builds the metrics in a new registry. */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const prefix = options.prefix ?? 'gatehouse_';
  const registry = new Registry();
  const registers = [registry];
  const pending: Pending[] = [];
  const collect = (): void => {
    for (let i = 0; i < pending.length; i++) pending[i].flush();
  };

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
  if (options.processMetrics !== false) {
    // The event-loop delay is sampled every 100 ms, not every 10: an idle
    // process then wakes 10 times a second for it instead of 100.
    collectDefaultMetrics({ register: registry, prefix, eventLoopMonitoringPrecision: 100 });
  }

  // Every outcome is exported from the start, as 0, so that rates work before the first event.
  const reloads = new Map(RELOAD_RESULTS.map((r) => [r, configReloads.labels(r)]));
  for (const child of reloads.values()) child.inc(0);
  const counted = <C extends Pending>(make: () => C): C => {
    const p = make();
    pending.push(p);
    return p;
  };
  const decisions = <R extends string>(results: readonly R[], counter: Counter<'result'>) =>
    new Map(
      results.map((r) => {
        const child = counter.labels(r);
        child.inc(0);
        return [r, counted(() => new PendingCount(child))];
      }),
    );
  const auth = decisions(AUTH_RESULTS, authDecisions);
  const rateLimit = decisions(RATELIMIT_RESULTS, rateLimitDecisions);

  // By protocol first: two or three of them, each with its own cache of the other labels.
  const requestChildren = new Map<string, (route: string, method: string, status: string) => PendingCount>();
  const requestChild = (protocol: string, route: string, method: string, status: string): PendingCount => {
    let byProtocol = requestChildren.get(protocol);
    if (byProtocol === undefined) {
      byProtocol = childCache3((r, m, s) => counted(() => new PendingCount(httpRequests.labels(r, m, s, protocol))));
      requestChildren.set(protocol, byProtocol);
    }
    return byProtocol(route, method, status);
  };
  const durationChild = childCache2((route, method) => httpRequestDuration.labels(route, method));
  const upstreamChild = childCache2((route, kind) => upstreamErrors.labels(route, kind));
  const overflowChild = childCache2((cluster, limit) => upstreamOverflows.labels(cluster, limit));
  const databaseCallChild = new Map<string, { observe(value: number): void }>();
  const databaseErrorChild = childCache2((operation, kind) => databaseErrors.labels(operation, kind));
  const statusText: string[] = [];
  const recordCertificates = certificateExpiryGauge(registry, prefix);

  const gather = options.gather;
  return {
    registry,
    exposition: gather ? () => gather(registry) : () => registry.metrics(),
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
    recordRequest(route, method, status, seconds, protocol = 'HTTP/1.1') {
      const m = KNOWN_METHODS.has(method) ? method : 'OTHER';
      const s = statusText[status] ?? (statusText[status] = String(status));
      requestChild(protocol, route, m, s).count++;
      durationChild(route, m).observe(seconds);
    },
    recordAuth: (result) => {
      const p = auth.get(result);
      if (p) p.count++;
    },
    recordRateLimit: (result) => {
      const p = rateLimit.get(result);
      if (p) p.count++;
    },
    recordUpstreamError: (route, kind) => upstreamChild(route, kind).inc(),
    recordUpstreamRetry: (route) => upstreamRetries.labels(route).inc(),
    recordUpstreamOverflow: (cluster, limit) => overflowChild(cluster, limit).inc(),
    recordUpstreamEjection: (cluster) => upstreamEjections.labels(cluster).inc(),
    recordConfigReload: (result) => reloads.get(result)?.inc(),
    recordCertificates,
    recordDatabaseCall(operation, seconds, failure) {
      let child = databaseCallChild.get(operation);
      if (child === undefined) databaseCallChild.set(operation, (child = databaseCallDuration.labels(operation)));
      child.observe(seconds);
      if (failure !== undefined) databaseErrorChild(operation, failure).inc();
    },
  };
}

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
