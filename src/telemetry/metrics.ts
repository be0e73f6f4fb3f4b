/**
 * @module telemetry/metrics
 * The Prometheus metrics of a gateway, in a registry of its own (never
 * prom-client's global one, so that several gateways can live in one process),
 * and the shortcuts that record into them (the handler that serves them is
 * ./metrics-handler).
 */
import { collectDefaultMetrics, Registry, type Counter } from 'prom-client';
import { histogramObserver } from '../platform';
import type { Logger } from './logger';
import { PendingCount, type Pending } from './pending';
import { certificateExpiryGauge, type CertificateExpiry } from './certificate-metrics';
import { childCache2, childCache3 } from './label-children';
import { createMetricFamilies, type MetricFamilies } from './metric-families';

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
export interface Metrics extends MetricFamilies {
  readonly registry: Registry;
  /** The text a scrape gets: the registry's, or what {@link MetricsOptions.gather} gathers. */
  exposition(): Promise<string>;
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

// Any other method is counted as OTHER, so that a client cannot grow the label set.
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/** Builds the metrics in a new registry. */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const prefix = options.prefix ?? 'gatehouse_';
  const registry = new Registry();
  const pending: Pending[] = [];
  const collect = (): void => {
    for (let i = 0; i < pending.length; i++) pending[i].flush();
  };
  const families = createMetricFamilies({
    prefix,
    registry,
    durationBuckets: options.durationBuckets,
    logger: options.logger,
    collect,
  });
  const { httpRequests, httpRequestDuration, authDecisions, rateLimitDecisions, upstreamErrors } = families;
  const { upstreamRetries, upstreamOverflows, upstreamEjections, configReloads } = families;
  const { databaseCallDuration, databaseErrors } = families;
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
  const observeDuration = childCache2((route, method) => histogramObserver(httpRequestDuration, { route, method }));
  const upstreamChild = childCache2((route, kind) => upstreamErrors.labels(route, kind));
  const overflowChild = childCache2((cluster, limit) => upstreamOverflows.labels(cluster, limit));
  const observeDatabaseCall = new Map<string, (seconds: number) => void>();
  const databaseErrorChild = childCache2((operation, kind) => databaseErrors.labels(operation, kind));
  const statusText: string[] = [];
  const recordCertificates = certificateExpiryGauge(registry, prefix);

  const gather = options.gather;
  return {
    registry,
    exposition: gather ? () => gather(registry) : () => registry.metrics(),
    ...families,
    recordRequest(route, method, status, seconds, protocol = 'HTTP/1.1') {
      const m = KNOWN_METHODS.has(method) ? method : 'OTHER';
      const s = statusText[status] ?? (statusText[status] = String(status));
      requestChild(protocol, route, m, s).count++;
      observeDuration(route, m)(seconds);
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
      let observe = observeDatabaseCall.get(operation);
      if (observe === undefined)
        observeDatabaseCall.set(operation, (observe = histogramObserver(databaseCallDuration, { operation })));
      observe(seconds);
      if (failure !== undefined) databaseErrorChild(operation, failure).inc();
    },
  };
}
