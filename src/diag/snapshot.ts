/**
 * @module diag/snapshot
 * What the diagnostic page shows, as plain data (also its JSON form), and how
 * to describe a running gateway with it.
 */
import {
  allowedUpgrades,
  describeMatch,
  sharesOf,
  upstreamSettings,
  type AuthServiceRecord,
  type GatewayConfig,
  type HeaderCondition,
  type MappingRecord,
  type MatchDescription,
  type RateLimitServiceRecord,
  type UpstreamSettings,
} from '../gateway';
import type { RouteCounters } from '../telemetry';

/** Whether a service is one of the process's own modules or an address. */
export type ServiceTarget = 'in-process' | 'remote';

/** A route, as configured, with what it has served; its patterns, query conditions, weight and redirect as {@link MatchDescription}. */
export interface DiagRoute extends MatchDescription {
  name: string;
  prefix: string;
  rewrite: string;
  service: string;
  target: ServiceTarget | 'redirect';
  bypass_auth: boolean;
  precedence: number;
  method?: string;
  /** Headers a request must carry: an exact value, or `true` for any. */
  headers?: Record<string, HeaderCondition>;
  /** The hosts it applies to (`hostname`, or `host`), when not any. */
  hostname?: string;
  /** `false` when the prefix matches in any case. */
  case_sensitive?: false;
  /** The Host a remote upstream is sent instead of its own. */
  host_rewrite?: string;
  /** The protocols a request may switch its connection to (`allow_upgrade`), when any. */
  allow_upgrade?: string[];
  /** `true` when paths with escapes that are not UTF-8 or are encoded twice reach its backend. */
  allow_unsafe_path_escapes?: true;
  labels?: MappingRecord['labels'];
  /** The upstream fields it gives (retry_policy, circuit_breakers, load_balancer...), as written. */
  upstream?: UpstreamSettings;
  /** Whether the mapping has a CORS policy of its own. */
  cors?: boolean;
  requests: number;
  /** Answers with a 5xx status. */
  errors: number;
  /** Answers with a 4xx status. */
  clientErrors: number;
}

export interface DiagAuth {
  name: string;
  service: string;
  target: ServiceTarget;
  failure_mode_allow: boolean;
  status_on_error: number;
  timeout_ms: number;
  path_prefix: string;
  allowed_authorization_headers: string[];
  allowed_request_headers: string[];
}

export interface DiagRateLimit {
  name: string;
  service: string;
  target: ServiceTarget;
  domain: string;
  failure_mode_deny: boolean;
  timeout_ms: number;
}

export interface DiagConfig {
  /** The config folder. */
  dir: string;
  /** The files the serving configuration was read from. */
  sources: string[];
  /** When the serving configuration was loaded (ISO 8601). */
  loadedAt: string;
  /** The problems of the last rejected reload; empty when the last one was applied. */
  errors: string[];
  /** When a reload was last tried, applied or not (ISO 8601). */
  lastReloadAt?: string;
}

/** Everything the diagnostic page shows. */
export interface DiagSnapshot {
  version: string;
  /** ISO 8601. */
  startedAt: string;
  uptimeSeconds: number;
  /** In match order. */
  routes: DiagRoute[];
  auth?: DiagAuth;
  rateLimit?: DiagRateLimit;
  config: DiagConfig;
  counters: { requests: number; errors: number; clientErrors: number };
}

/** What a gateway knows of itself, for {@link describeGateway}. */
export interface GatewayDescription {
  version: string;
  startedAt: Date;
  /** The serving configuration; its `mappings` in match order (the route table's order). */
  config: GatewayConfig;
  configDir: string;
  loadedAt: Date;
  /** The problems of the last rejected reload. */
  configErrors?: readonly string[];
  lastReloadAt?: Date;
  /** The built-in services: a record naming one of these is served in process. */
  modules: { has(name: string): boolean };
  counters?: RouteCounters;
  /** Default: now. */
  now?: Date;
}

/** Builds the snapshot of a gateway. */
export function describeGateway(d: GatewayDescription): DiagSnapshot {
  const now = d.now ?? new Date();
  const target = (service: string): ServiceTarget => (d.modules.has(service) ? 'in-process' : 'remote');
  const snapshot: DiagSnapshot = {
    version: d.version,
    startedAt: d.startedAt.toISOString(),
    uptimeSeconds: Math.max(0, Math.floor((now.getTime() - d.startedAt.getTime()) / 1000)),
    routes: describeMappings(d.config.mappings, target, d.counters),
    config: {
      dir: d.configDir,
      sources: [...d.config.sources],
      loadedAt: d.loadedAt.toISOString(),
      errors: [...(d.configErrors ?? [])],
    },
    counters: d.counters ? { ...d.counters.totals() } : { requests: 0, errors: 0, clientErrors: 0 },
  };
  if (d.lastReloadAt) snapshot.config.lastReloadAt = d.lastReloadAt.toISOString();
  if (d.config.authService) snapshot.auth = describeAuth(d.config.authService, target(d.config.authService.auth_service));
  if (d.config.rateLimitService) {
    snapshot.rateLimit = describeRateLimit(d.config.rateLimitService, target(d.config.rateLimitService.service));
  }
  return snapshot;
}

function describeMappings(mappings: readonly MappingRecord[], target: (service: string) => ServiceTarget, counters?: RouteCounters): DiagRoute[] {
  const shares = sharesOf(mappings);
  // A Mapping with a namespace names a Kubernetes Service, even one named like a module.
  const targetOf = (m: MappingRecord) => (m.host_redirect === true ? 'redirect' : m.namespace === undefined ? target(m.service) : 'remote');
  return mappings.map((m) => describeMapping(m, targetOf(m), shares.get(m), counters));
}

function describeMapping(m: MappingRecord, target: ServiceTarget | 'redirect', share: number | undefined, counters?: RouteCounters): DiagRoute {
  const counts = counters?.get(m.name);
  const route: DiagRoute = {
    ...describeMatch(m, share),
    name: m.name,
    prefix: m.prefix,
    rewrite: m.rewrite,
    service: m.service,
    target,
    bypass_auth: m.bypass_auth,
    precedence: m.precedence,
    requests: counts?.requests ?? 0,
    errors: counts?.errors ?? 0,
    clientErrors: counts?.clientErrors ?? 0,
  };
  if (m.method) route.method = m.method;
  if (m.headers && Object.keys(m.headers).length > 0) route.headers = { ...m.headers };
  const hostname = m.hostname ?? m.host;
  if (hostname !== undefined && hostname !== '*') route.hostname = hostname;
  if (!m.case_sensitive) route.case_sensitive = false;
  if (m.host_rewrite !== undefined) route.host_rewrite = m.host_rewrite;
  const upgrades = allowedUpgrades(m);
  if (upgrades.length > 0) route.allow_upgrade = [...upgrades];
  if (m.allow_unsafe_path_escapes) route.allow_unsafe_path_escapes = true;
  if (m.labels) route.labels = m.labels;
  const upstream = upstreamSettings(m);
  if (upstream !== undefined) route.upstream = upstream;
  if (m.cors) route.cors = true;
  return route;
}

function describeAuth(a: AuthServiceRecord, target: ServiceTarget): DiagAuth {
  return {
    name: a.name,
    service: a.auth_service,
    target,
    failure_mode_allow: a.failure_mode_allow,
    status_on_error: a.status_on_error,
    timeout_ms: a.timeout_ms,
    path_prefix: a.path_prefix,
    allowed_authorization_headers: [...a.allowed_authorization_headers],
    allowed_request_headers: [...a.allowed_request_headers],
  };
}

function describeRateLimit(r: RateLimitServiceRecord, target: ServiceTarget): DiagRateLimit {
  return {
    name: r.name,
    service: r.service,
    target,
    domain: r.domain,
    failure_mode_deny: r.failure_mode_deny,
    timeout_ms: r.timeout_ms,
  };
}
