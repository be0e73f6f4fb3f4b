/**
 * @module diag/describe
 * What the diagnostic page shows of a configuration: its routes in match
 * order, its auth and rate-limit services. It changes only when the
 * configuration does, so a gateway describes it once for each one it
 * serves (in slices, since a large one takes long enough to hold up
 * requests), and each view of the page adds the counts and times to it
 * (./snapshot).
 */
import {
  allowedUpgrades,
  copyData,
  deepFreeze,
  describeMatch,
  sharesOfSteps,
  upstreamSettings,
  type AuthServiceRecord,
  type GatewayConfig,
  type MappingRecord,
  type RateLimitServiceRecord,
  type Steps,
} from '../gateway';
import type { DiagAuth, DiagRateLimit, DiagRoute, ServiceTarget } from './types';

/** What the page shows of a configuration; frozen, its routes' counts at zero. */
export interface DiagServed {
  /** In the order of the configuration's `mappings`. */
  readonly routes: readonly DiagRoute[];
  readonly auth?: DiagAuth;
  readonly rateLimit?: DiagRateLimit;
  /** The files the configuration was read from. */
  readonly sources: readonly string[];
}

/**
 * Describes `config`, its `mappings` given in match order (the route
 * table's); `modules` are the services served in process. A step a Mapping
 * (see ../gateway/slices).
 */
export function* describeServedSteps(
  config: GatewayConfig,
  modules: { has(name: string): boolean },
): Steps<DiagServed> {
  const target = (service: string): ServiceTarget => (modules.has(service) ? 'in-process' : 'remote');
  // A Mapping with a namespace names a Kubernetes Service, even one named like a module.
  const targetOf = (m: MappingRecord) =>
    m.host_redirect === true ? 'redirect' : m.namespace === undefined ? target(m.service) : 'remote';
  const shares = yield* sharesOfSteps(config.mappings);
  const routes: DiagRoute[] = [];
  for (const m of config.mappings) {
    routes.push(deepFreeze(describeMapping(m, targetOf(m), shares.get(m))));
    yield;
  }
  const served: { -readonly [K in keyof DiagServed]: DiagServed[K] } = { routes, sources: [...config.sources] };
  if (config.authService) served.auth = describeAuth(config.authService, target(config.authService.auth_service));
  if (config.rateLimitService)
    served.rateLimit = describeRateLimit(config.rateLimitService, target(config.rateLimitService.service));
  return deepFreeze(served);
}

function describeMapping(m: MappingRecord, target: ServiceTarget | 'redirect', share: number | undefined): DiagRoute {
  const route: DiagRoute = {
    ...describeMatch(m, share),
    name: m.name,
    prefix: m.prefix,
    rewrite: m.rewrite,
    service: m.service,
    target,
    bypass_auth: m.bypass_auth,
    precedence: m.precedence,
    // Counted for each view of the page (see countedSnapshotSteps), in this place among the fields.
    requests: 0,
    errors: 0,
    clientErrors: 0,
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
  // A copy: the route is frozen, the configuration's records are not.
  if (m.labels) route.labels = copyData(m.labels);
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
