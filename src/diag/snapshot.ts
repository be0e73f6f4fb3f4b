/**
 * @module diag/snapshot
 * What the diagnostic page shows, as plain data (also its JSON form), and how
 * to describe a running gateway with it: what its configuration serves
 * (./describe), and what each view adds to that, its counts and times.
 */
import {
  runAtOnce,
  type GatewayConfig,
  type HeaderCondition,
  type MappingRecord,
  type MatchDescription,
  type Steps,
  type UpstreamSettings,
} from '../gateway';
import type { RequestCounts, RouteCounters } from '../telemetry';
import { describeServedSteps, type DiagServed } from './describe';

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

/** Builds the snapshot of a gateway, at once (see {@link describeServedSteps} and {@link countedSnapshotSteps} for one in slices). */
export function describeGateway(d: GatewayDescription): DiagSnapshot {
  const served = runAtOnce(describeServedSteps(d.config, d.modules));
  const counters = d.counters;
  const moment: DiagMoment = { ...d, now: d.now ?? new Date(), totals: counters?.totals() };
  return runAtOnce(countedSnapshotSteps(served, moment, counters && ((route) => counters.get(route))));
}

/** What a view of the page shows besides what the configuration serves: the times, the last reload, the totals. */
export interface DiagMoment {
  version: string;
  startedAt: Date;
  now: Date;
  configDir: string;
  /** When the configuration described was loaded. */
  loadedAt: Date;
  configErrors?: readonly string[];
  lastReloadAt?: Date;
  /** Default: zeros. */
  totals?: Readonly<RequestCounts>;
}

/**
 * The snapshot of `served` at `moment`, each route with its counts
 * (`countsOf` its name; none, zeros). A route that counted nothing is the
 * frozen one of `served` itself, so that the page can keep what it renders
 * of it; a step a route (see ../gateway/slices).
 */
export function* countedSnapshotSteps(
  served: DiagServed,
  moment: DiagMoment,
  countsOf?: (route: string) => Readonly<RequestCounts> | undefined,
): Steps<DiagSnapshot> {
  const routes: DiagRoute[] = [];
  for (const route of served.routes) {
    const counts = countsOf?.(route.name);
    const counted = counts !== undefined && (counts.requests !== 0 || counts.errors !== 0 || counts.clientErrors !== 0);
    // Assigned over the spread, the counts keep their place among the fields (and in the JSON).
    routes.push(
      counted
        ? { ...route, requests: counts.requests, errors: counts.errors, clientErrors: counts.clientErrors }
        : route,
    );
    yield;
  }
  const { startedAt, now } = moment;
  const snapshot: DiagSnapshot = {
    version: moment.version,
    startedAt: startedAt.toISOString(),
    uptimeSeconds: Math.max(0, Math.floor((now.getTime() - startedAt.getTime()) / 1000)),
    routes,
    config: {
      dir: moment.configDir,
      sources: [...served.sources],
      loadedAt: moment.loadedAt.toISOString(),
      errors: [...(moment.configErrors ?? [])],
    },
    counters: moment.totals ? { ...moment.totals } : { requests: 0, errors: 0, clientErrors: 0 },
  };
  if (moment.lastReloadAt) snapshot.config.lastReloadAt = moment.lastReloadAt.toISOString();
  if (served.auth)
    snapshot.auth = {
      ...served.auth,
      allowed_authorization_headers: [...served.auth.allowed_authorization_headers],
      allowed_request_headers: [...served.auth.allowed_request_headers],
    };
  if (served.rateLimit) snapshot.rateLimit = { ...served.rateLimit };
  return snapshot;
}
