/**
 * @module gateway/match/route
 * One route of the route table: a Mapping compiled for matching (its
 * prefix, exact path or path pattern, its constraints, its host, its
 * rewrite), the order routes are tried in, the groups of routes that share
 * a match, and whether a route matches a request.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { HeaderCondition, MappingRecord } from '../config/schema';
import { hostMatches, hostSpecificity, parseHostPattern, type HostPattern } from './host-match';
import { matchKey, settleGroup, WeightGroup } from './canary';
import { foldCase, startsWithFolded } from './case-fold';
import {
  compilePatterns,
  conditionsMatch,
  type CompiledPatterns,
  type MatchConditions,
  type RequestReading,
} from './conditions';
import { namesPseudoHeader } from './pseudo-headers';
import { foldsCase, type MatchMeter, type Pattern } from './regex';
import type { Steps } from '../slices';
import type { Substitution } from './substitution';

/** A route as the table holds it: a Mapping, its normalised prefix and what it forwards to. */
export interface Route<T> {
  readonly mapping: MappingRecord;
  /** The normalised prefix; for `prefix_regex`, the pattern. */
  readonly prefix: string;
  readonly target: T;
  /** Its place in the configuration, 0-based. */
  readonly index: number;
  /** Emissary's weight of its header matchers (`headers`, `regex_headers`, `method`, `host`), for match order. */
  readonly headerWeight: number;
  /** Emissary's weight of its query matchers (`query_parameters`, `regex_query_parameters`). */
  readonly queryWeight: number;
  /** The hosts it applies to, by glob; null for any (or for a host pattern, in `conditions`). */
  readonly host: HostPattern | null;
  /** How specific its host is, for match order. */
  readonly hostRank: number;
  /** Whether the prefix matches only in the case it is written. */
  readonly caseSensitive: boolean;
  /** The prefix in lower case, to match in any case. */
  readonly folded: string;
  /** The exact method; null for any (or for a method pattern, in `conditions`). */
  readonly method: string | null;
  /** Each required header and its exact value, or `true` for any value. */
  readonly headers: readonly (readonly [string, HeaderCondition])[] | null;
  /** Whether the prefix ends in `/` (a plain string prefix). */
  readonly open: boolean;
  /** `prefix_exact`: the path must be the prefix itself. */
  readonly exact: boolean;
  /** `prefix_regex`: the pattern the whole path must match. */
  readonly pattern: Pattern | null;
  /** The other patterns and the query conditions; null when it has none. */
  readonly conditions: MatchConditions | null;
  /** Where the forwarded remainder of the path starts (the prefix's trailing slash is kept). */
  readonly cut: number;
  /** `rewrite`, and `rewrite` without its trailing slash, for joining. */
  readonly rewrite: string;
  readonly rewriteBase: string;
  /** `regex_rewrite`, which then replaces `rewrite`. */
  readonly pathRewrite: Substitution | null;
  /** The routes with the same match, when there are others, among which it is chosen by weight. */
  group: WeightGroup<Route<T>> | null;
}

/** What a route is built from. */
export interface RouteSpec<T> {
  readonly mapping: MappingRecord;
  /** The mapping's prefix, already normalised (for `prefix_regex`, the pattern). */
  readonly prefix: string;
  readonly target: T;
  /** The mapping's patterns, compiled when the configuration was checked; compiled here when absent. */
  readonly patterns?: CompiledPatterns;
}

/** A host pattern (`host_regex`) ranks below every glob. */
const HOST_PATTERN_RANK = 500_000;

/**
 * The weight Emissary orders Mappings of one prefix by: each matcher counts
 * the length of its name and of its value (`*` for any value), and one more
 * for a pattern; `method` is the header `:method`, a v2 `host` the header
 * `:authority`. A longer matcher is more specific, whatever the count.
 */
function matcherWeight(entries: Readonly<Record<string, unknown>> | undefined, regex: boolean): number {
  let weight = 0;
  if (entries === undefined) return 0;
  for (const name in entries) {
    const value = entries[name];
    weight += name.length + (typeof value === 'string' ? value.length : 1) + (regex ? 1 : 0);
  }
  return weight;
}

function headerWeightOf(m: MappingRecord): number {
  let weight = matcherWeight(m.headers, false) + matcherWeight(m.regex_headers, true);
  if (m.method !== undefined) weight += ':method'.length + m.method.length + (m.method_regex === true ? 1 : 0);
  if (m.host !== undefined && m.hostname === undefined)
    weight += ':authority'.length + m.host.length + (m.host_regex === true ? 1 : 0);
  return weight;
}

/** Orders routes as they are tried. */
export function compareRoutes<T>(a: Route<T>, b: Route<T>): number {
  return (
    b.mapping.precedence - a.mapping.precedence ||
    b.prefix.length - a.prefix.length ||
    b.headerWeight - a.headerWeight ||
    b.queryWeight - a.queryWeight ||
    b.hostRank - a.hostRank ||
    Number(b.exact) - Number(a.exact) ||
    a.index - b.index
  );
}

export function compileRoute<T>(spec: RouteSpec<T>, index: number): Route<T> {
  const { mapping, prefix } = spec;
  const patterns = spec.patterns ?? compilePatterns(mapping);
  if (patterns.problems.length > 0)
    throw new Error(`Mapping ${mapping.name}: ${patterns.problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  const conditions = patterns.conditions;
  const headers = mapping.headers ? Object.entries(mapping.headers).filter(([name]) => !namesPseudoHeader(name)) : [];
  const regex = mapping.prefix_regex === true;
  const open = !regex && mapping.prefix_exact !== true && prefix.endsWith('/');
  const rewrite = mapping.rewrite;
  // Validated when the record was read: a pattern or null (any host).
  const written = mapping.hostname ?? (mapping.host_regex === true ? undefined : mapping.host);
  const host = written === undefined ? null : (parseHostPattern(written, true) as HostPattern | null);
  const method = mapping.method_regex === true ? null : (mapping.method ?? null);
  return {
    mapping,
    prefix,
    target: spec.target,
    index,
    headerWeight: headerWeightOf(mapping),
    queryWeight: matcherWeight(mapping.query_parameters, false) + matcherWeight(mapping.regex_query_parameters, true),
    host,
    hostRank: conditions?.host ? HOST_PATTERN_RANK : hostSpecificity(host),
    caseSensitive: regex ? !foldsCase(prefix) : mapping.case_sensitive,
    folded: foldCase(prefix),
    method,
    headers: headers.length > 0 ? headers : null,
    open,
    exact: mapping.prefix_exact === true,
    pattern: conditions?.path ?? null,
    conditions,
    cut: open ? prefix.length - 1 : prefix.length,
    rewrite,
    rewriteBase: rewrite.endsWith('/') ? rewrite.slice(0, -1) : rewrite,
    pathRewrite: patterns.pathRewrite,
    group: null,
  };
}

/** Joins the routes with the same match into weighted groups, a step a route (see ../slices). */
export function* groupRoutesSteps<T>(routes: readonly Route<T>[]): Steps<void> {
  const groups = new Map<string, WeightGroup<Route<T>>>();
  for (const route of routes) {
    const key = matchKey(route.mapping, route.prefix);
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = new WeightGroup()));
    group.members.push(route);
    yield;
  }
  for (const group of groups.values()) {
    yield;
    if (group.members.length < 2) continue;
    settleGroup(group, (route) => route.mapping.weight);
    for (const route of group.members) route.group = group;
  }
}

/** Whether a route's method, headers, host and conditions admit a request. */
export function constraintsMatch<T>(
  route: Route<T>,
  method: string,
  headers: IncomingHttpHeaders,
  host: string | undefined,
  reading: RequestReading,
): boolean {
  if (route.method !== null && route.method !== method) return false;
  if (route.headers !== null && !headersMatch(route.headers, headers)) return false;
  if (route.host !== null && !hostMatches(route.host, host)) return false;
  return route.conditions === null || conditionsMatch(route.conditions, method, headers, reading);
}

/** Whether a route matches a request, its prefix compared in the case it is written or in any case. */
export function routeMatches<T>(
  route: Route<T>,
  exactCase: boolean,
  path: string,
  method: string,
  headers: IncomingHttpHeaders,
  host: string | undefined,
  reading: RequestReading,
): boolean {
  return pathMatches(route, exactCase, path, reading.meter) && constraintsMatch(route, method, headers, host, reading);
}

/** Whether `route`'s prefix or pattern takes `path`, whatever else it asks of a request; a pattern's reading charged to `meter`. */
export function pathMatches<T>(route: Route<T>, exactCase: boolean, path: string, meter: MatchMeter): boolean {
  const pattern = route.pattern;
  if (pattern === null) {
    const prefix = route.prefix;
    if (exactCase ? !path.startsWith(prefix) : !startsWithFolded(path, route.folded)) return false;
    if (path.length > prefix.length && (route.exact || (!route.open && path.charCodeAt(prefix.length) !== 47)))
      return false;
    return true;
  }
  return pattern.testExact(path, meter, 'url');
}

function headersMatch(
  required: readonly (readonly [string, HeaderCondition])[],
  headers: IncomingHttpHeaders,
): boolean {
  for (let i = 0; i < required.length; i++) {
    const value = headers[required[i][0]];
    const wanted = required[i][1];
    if (wanted === true ? value === undefined : value !== wanted) return false;
  }
  return true;
}
