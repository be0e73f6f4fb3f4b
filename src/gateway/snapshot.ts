/**
 * @module gateway/snapshot
 * A read-only picture of what the gateway serves, for the diagnostic page and
 * for tests: routes in match order, the auth and rate-limit records, the files
 * the configuration came from, and the last configuration that was refused.
 */
import type { ConfigProblem } from './config/problems';
import {
  allowedUpgrades,
  type AuthServiceRecord,
  type GatewayConfig,
  type HeaderCondition,
  type LabelGroup,
  type RateLimitServiceRecord,
  type RecordSource,
} from './config/schema';
import { formatHostPattern } from './match/host-match';
import { describeMatch, groupPercents, type MatchDescription } from './match/describe';
import type { Route, RouteTable } from './match/route-table';
import { runAtOnce, type Steps } from './slices';
import { upstreamSettings, type UpstreamSettings } from './upstream/describe';

/** What stands for a value the snapshot does not show. */
export const REDACTED = '[redacted]';

/**
 * The auth record as shown: the values of `add_auth_headers` (an API key, a
 * bearer token) left out. Addresses need no such care: one holding
 * credentials is refused when the configuration loads.
 */
function shownAuthService(record: AuthServiceRecord): AuthServiceRecord {
  const shown = structuredClone(record);
  for (const name of Object.keys(shown.add_auth_headers)) shown.add_auth_headers[name] = REDACTED;
  return shown;
}

/** One route, as the diagnostic page shows it; its patterns, query conditions, weight and redirect as {@link MatchDescription}. */
export interface RouteSnapshot extends MatchDescription {
  readonly name: string;
  /** The normalised prefix it matches. */
  readonly prefix: string;
  readonly rewrite: string;
  readonly service: string;
  readonly target: 'in-process' | 'remote' | 'redirect';
  readonly precedence: number;
  readonly method?: string;
  /** Required headers: an exact value, or `true` for any. */
  readonly headers?: Readonly<Record<string, HeaderCondition>>;
  /** The hosts it applies to (`hostname`, or `host`; a pattern with `host_regex`), when not any. */
  readonly hostname?: string;
  /** `false` when the prefix matches in any case. */
  readonly case_sensitive?: false;
  /** The Host a remote upstream is sent instead of its own. */
  readonly host_rewrite?: string;
  /** The protocols a request may switch its connection to (`allow_upgrade`), when any. */
  readonly allow_upgrade?: readonly string[];
  /** `grpc: true`: its calls go to the upstream over HTTP/2. */
  readonly grpc?: true;
  /** `true` when paths with escapes that are not UTF-8 or are encoded twice reach its backend. */
  readonly allow_unsafe_path_escapes?: true;
  readonly bypass_auth: boolean;
  readonly timeout_ms: number;
  readonly labels?: Readonly<Record<string, readonly LabelGroup[]>>;
  /** The upstream cluster of a remote route (shared by the routes of one service with the same settings). */
  readonly cluster?: string;
  /** The upstream fields the Mapping gives (retry_policy, circuit_breakers, load_balancer...), as written. */
  readonly upstream?: Readonly<UpstreamSettings>;
  readonly source?: RecordSource;
}

/** What one configuration serves. */
export interface RuntimeSnapshot {
  /** When the configuration was put in service (ISO 8601). */
  readonly loadedAt: string;
  /** In match order. */
  readonly routes: readonly RouteSnapshot[];
  readonly authService?: Readonly<AuthServiceRecord>;
  readonly rateLimitService?: Readonly<RateLimitServiceRecord>;
  readonly sources: readonly string[];
}

/** A configuration that was refused; the one before it kept serving. */
export interface RejectedConfig {
  readonly at: string;
  readonly problems: readonly ConfigProblem[];
}

/** The gateway as a whole. */
export interface GatewaySnapshot extends Partial<RuntimeSnapshot> {
  /** Whether a configuration is loaded. */
  readonly ready: boolean;
  readonly routes: readonly RouteSnapshot[];
  readonly sources: readonly string[];
  readonly rejected?: RejectedConfig;
}

/** Freezes a value and everything in it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * A copy of plain data (what a record's fields hold: objects, lists,
 * strings, numbers, booleans): structuredClone costs ten times as much for
 * the small values of one route, a second over 30 000 routes.
 */
export function copyData<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyData) as T;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = copyData((value as Record<string, unknown>)[key]);
  return copy as T;
}

/** Describes a configuration and its route table. */
export function describeRoutes(config: GatewayConfig, table: RouteTable<DescribedTarget>): RuntimeSnapshot {
  return runAtOnce(describeRoutesSteps(config, table));
}

/** {@link describeRoutes}, a step a route (see ./slices). */
export function* describeRoutesSteps(
  config: GatewayConfig,
  table: RouteTable<DescribedTarget>,
): Steps<RuntimeSnapshot> {
  const routes: RouteSnapshot[] = [];
  // Each group's shares worked out once, from the table's own groups: no second pass over every Mapping's match.
  const shares = new Map<Route<DescribedTarget>, number>();
  for (const route of table.routes) {
    const group = route.group;
    if (group !== null && !shares.has(route)) {
      const percents = groupPercents(group.members.map((r) => r.mapping.weight));
      if (percents !== undefined) group.members.forEach((member, i) => shares.set(member, percents[i]));
    }
    routes.push(deepFreeze(describeRoute(config, route, shares.get(route))));
    yield;
  }
  return deepFreeze({
    loadedAt: new Date().toISOString(),
    routes,
    ...(config.authService ? { authService: shownAuthService(config.authService) } : {}),
    ...(config.rateLimitService ? { rateLimitService: structuredClone(config.rateLimitService) } : {}),
    sources: [...config.sources],
  });
}

/** What the snapshot reads of a route's target. */
type DescribedTarget =
  { kind: 'in-process' | 'redirect' } | { kind: 'remote'; upstream: { cluster: { name: string } } };

function describeRoute(config: GatewayConfig, route: Route<DescribedTarget>, share: number | undefined): RouteSnapshot {
  const m = route.mapping;
  const source = config.recordSources?.get(m);
  const upgrades = allowedUpgrades(m);
  const target = route.target;
  // A module called in process has no cluster for the ambassador Module's upstream settings to apply to.
  const upstream = upstreamSettings(m, target.kind === 'in-process' ? source?.fromModule : undefined);
  return {
    name: m.name,
    prefix: route.prefix,
    rewrite: m.rewrite,
    service: m.service,
    target: target.kind,
    precedence: m.precedence,
    ...(m.method ? { method: m.method } : {}),
    ...(m.headers ? { headers: copyData(m.headers) } : {}),
    ...(route.host
      ? { hostname: formatHostPattern(route.host) }
      : m.host_regex === true && m.host !== undefined
        ? { hostname: m.host }
        : {}),
    ...(m.case_sensitive ? {} : { case_sensitive: false as const }),
    ...(m.host_rewrite !== undefined ? { host_rewrite: m.host_rewrite } : {}),
    ...(upgrades.length > 0 ? { allow_upgrade: [...upgrades] } : {}),
    ...(m.grpc === true ? { grpc: true as const } : {}),
    ...(m.allow_unsafe_path_escapes ? { allow_unsafe_path_escapes: true as const } : {}),
    bypass_auth: m.bypass_auth,
    timeout_ms: m.timeout_ms,
    ...(m.labels ? { labels: copyData(m.labels) } : {}),
    ...describeMatch(m, share),
    ...(target.kind === 'remote' ? { cluster: target.upstream.cluster.name } : {}),
    ...(upstream !== undefined ? { upstream } : {}),
    ...(source ? { source: { ...source } } : {}),
  };
}
