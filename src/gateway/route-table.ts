/**
 * @module gateway/route-table
 * Which Mapping a request goes to, and the path it is forwarded with.
 *
 * Match order: `precedence` (higher first), then the longer `prefix`, then
 * more constraints (`method`, each of `headers` and a `hostname` other than
 * `*` count one), then the more specific hostname (an exact name before a
 * glob, a longer glob before a shorter), then config order; the first route
 * that matches wins.
 *
 * Prefix rule, on the normalised path: a prefix that ends in `/` matches any
 * path that starts with it (`/v1/` matches `/v1/x`, not `/v1`); a prefix
 * without a trailing slash matches itself and what lies below it on a segment
 * boundary (`/v1/hotels` matches `/v1/hotels` and `/v1/hotels/x`, never
 * `/v1/hotelsX`).
 *
 * `case_sensitive: false` matches the prefix in any case (ASCII letters, as
 * Envoy compares them). Such a route takes a path only when no route before it
 * in match order would take the path in some other case: `/API/Admin/x` goes
 * where `/api/admin/x` goes, to the `/api/admin/` route with its auth, rather
 * than to a case-insensitive `/api/` route after it that bypasses auth, whose
 * backend, read alike in any case, would serve the admin path too. A path that
 * such a backend reads as a route before it only by folding a character beyond
 * ASCII to a letter (`ſ` to s) is a 400.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { HttpError } from '../http';
import type { HeaderCondition, MappingRecord } from './config/schema';
import { hostMatches, hostSpecificity, parseHostPattern, type HostPattern } from './host-match';
import { runAtOnce, sortSteps, type Steps } from './slices';

/** A route as the table holds it: a Mapping, its normalised prefix and what it forwards to. */
export interface Route<T> {
  readonly mapping: MappingRecord;
  /** The normalised prefix. */
  readonly prefix: string;
  readonly target: T;
  /** Its place in the configuration, 0-based. */
  readonly index: number;
  /** `method`, header and host constraints, counted. */
  readonly constraints: number;
  /** The hosts it applies to; null for any. */
  readonly host: HostPattern | null;
  /** How specific `host` is, for match order. */
  readonly hostRank: number;
  /** Whether the prefix matches only in the case it is written. */
  readonly caseSensitive: boolean;
  /** The prefix in lower case, to match in any case. */
  readonly folded: string;
  readonly method: string | null;
  /** Each required header and its exact value, or `true` for any value. */
  readonly headers: readonly (readonly [string, HeaderCondition])[] | null;
  /** Whether the prefix ends in `/` (a plain string prefix). */
  readonly open: boolean;
  /** Where the forwarded remainder of the path starts (the prefix's trailing slash is kept). */
  readonly cut: number;
  /** `rewrite`, and `rewrite` without its trailing slash, for joining. */
  readonly rewrite: string;
  readonly rewriteBase: string;
}

/** What a route is built from. */
export interface RouteSpec<T> {
  readonly mapping: MappingRecord;
  /** The mapping's prefix, already normalised. */
  readonly prefix: string;
  readonly target: T;
}

/** Orders routes as they are tried. */
function compareRoutes<T>(a: Route<T>, b: Route<T>): number {
  return (
    b.mapping.precedence - a.mapping.precedence ||
    b.prefix.length - a.prefix.length ||
    b.constraints - a.constraints ||
    b.hostRank - a.hostRank ||
    a.index - b.index
  );
}

function compile<T>(spec: RouteSpec<T>, index: number): Route<T> {
  const { mapping, prefix } = spec;
  const headers = mapping.headers ? Object.entries(mapping.headers) : [];
  const open = prefix.endsWith('/');
  const rewrite = mapping.rewrite;
  // Validated when the record was read: a pattern or null (any host).
  const written = mapping.hostname ?? mapping.host;
  const host = written === undefined ? null : (parseHostPattern(written, true) as HostPattern | null);
  return {
    mapping,
    prefix,
    target: spec.target,
    index,
    constraints: (mapping.method ? 1 : 0) + headers.length + (host ? 1 : 0),
    host,
    hostRank: hostSpecificity(host),
    caseSensitive: mapping.case_sensitive,
    folded: foldCase(prefix),
    method: mapping.method ?? null,
    headers: headers.length > 0 ? headers : null,
    open,
    cut: open ? prefix.length - 1 : prefix.length,
    rewrite,
    rewriteBase: rewrite.endsWith('/') ? rewrite.slice(0, -1) : rewrite,
  };
}

/** Compiles the routes of `specs` in match order, a step a route (see ./slices). */
export function* compileRoutes<T>(specs: readonly RouteSpec<T>[]): Steps<Route<T>[]> {
  const routes: Route<T>[] = [];
  for (let i = 0; i < specs.length; i++) {
    routes.push(compile(specs[i], i));
    yield;
  }
  return yield* sortSteps(routes, compareRoutes);
}

/** The routes of one configuration, in match order. Built once, read by every request. */
export class RouteTable<T> {
  /** In match order. */
  readonly routes: readonly Route<T>[];

  /** `compiled`: the routes of `specs` already compiled by {@link compileRoutes}. */
  constructor(specs: readonly RouteSpec<T>[], compiled?: readonly Route<T>[]) {
    this.routes = compiled ?? runAtOnce(compileRoutes(specs));
  }

  /**
   * The first route matching a normalised path, method, headers and host
   * (by default the Host header; `''` or `undefined` for none); `undefined`
   * when none does.
   */
  match(path: string, method: string, headers: IncomingHttpHeaders, host: string | undefined = headers.host): Route<T> | undefined {
    const routes = this.routes;
    for (let i = 0; i < routes.length; i++) {
      const route = routes[i];
      if (!routeMatches(route, route.caseSensitive, path, method, headers, host)) continue;
      if (route.caseSensitive || i === 0) return route;
      // A route before it that takes the path in another case takes it in this one too.
      for (let j = 0; j < i; j++) {
        if (routeMatches(routes[j], false, path, method, headers, host)) return routes[j];
      }
      if (path.indexOf('%') !== -1) refuseUnicodeFolds(routes, i, path, method, headers, host);
      return route;
    }
    return undefined;
  }

  /**
   * {@link match} for a request that a backend may read otherwise: a path
   * that may hold `;parameters`, with `plain` the path without them
   * (`withoutParameters` of gateway/path), which Tomcat, Spring and JAX-RS
   * backends route by; `overrides`, the methods a method override names
   * (gateway/method-override), which they act on instead of `method`.
   * Throws a 400 {@link HttpError} when those readings would be routed apart
   * from the request: `/api;x/admin` to an open `/` route, where the backend
   * serves `/api/admin`, which has a route with auth; a POST with
   * `X-HTTP-Method-Override: DELETE` to a route for POST that bypasses auth.
   */
  matchAlike(
    path: string,
    plain: string,
    method: string,
    headers: IncomingHttpHeaders,
    host: string | undefined,
    overrides?: readonly string[],
  ): Route<T> | undefined {
    const route = this.match(path, method, headers, host);
    if (route === undefined) return route;
    if (plain !== path && this.match(plain, method, headers, host) !== route) {
      throw new HttpError(400, 'the ;parameters of the path would route it elsewhere than the path without them');
    }
    if (overrides !== undefined) {
      for (const other of overrides) {
        if (other === method) continue;
        if (this.match(path, other, headers, host) !== route || (plain !== path && this.match(plain, other, headers, host) !== route)) {
          throw new HttpError(400, 'the method override of the request would route it elsewhere than its method');
        }
      }
    }
    return route;
  }
}

/** Whether a route matches a request, its prefix compared in the case it is written or in any case. */
function routeMatches<T>(
  route: Route<T>,
  exactCase: boolean,
  path: string,
  method: string,
  headers: IncomingHttpHeaders,
  host: string | undefined,
): boolean {
  const prefix = route.prefix;
  if (exactCase ? !path.startsWith(prefix) : !startsWithFolded(path, route.folded)) return false;
  if (!route.open && path.length > prefix.length && path.charCodeAt(prefix.length) !== 47) return false;
  if (route.method !== null && route.method !== method) return false;
  if (route.headers !== null && !headersMatch(route.headers, headers)) return false;
  return route.host === null || hostMatches(route.host, host);
}

/**
 * Characters beyond ASCII that backends matching in any case read as an
 * ASCII letter, as a normal path escapes them (UTF-8, upper-case hex): Java's
 * `equalsIgnoreCase`, Go's `EqualFold` and .NET's `OrdinalIgnoreCase` fold
 * `ſ` (U+017F) to s, the Kelvin sign (U+212A) to k, and `ı` (U+0131) or
 * `İ` (U+0130) to i.
 */
const UNICODE_FOLDS: readonly (readonly [string, number])[] = [
  ['%C5%BF', 115],
  ['%E2%84%AA', 107],
  ['%C4%B1', 105],
  ['%C4%B0', 105],
];

/** The entry of {@link UNICODE_FOLDS} whose escape stands at `at` in `path`, if any. */
function unicodeFoldAt(path: string, at: number): readonly [string, number] | undefined {
  for (let i = 0; i < UNICODE_FOLDS.length; i++) if (path.startsWith(UNICODE_FOLDS[i][0], at)) return UNICODE_FOLDS[i];
  return undefined;
}

/**
 * Where the prefix `folded` (lower case) ends in `path` when its letters are
 * compared in any case, the characters of {@link UNICODE_FOLDS} included;
 * -1 when it does not start `path`.
 */
function endOfUnicodeFolded(path: string, folded: string): number {
  let p = 0;
  for (let k = 0; k < folded.length; k++, p++) {
    let c = path.charCodeAt(p);
    if (c === 37) {
      const fold = unicodeFoldAt(path, p);
      if (fold !== undefined) {
        if (fold[1] !== folded.charCodeAt(k)) return -1;
        p += fold[0].length - 1;
        continue;
      }
    }
    if (c >= 65 && c <= 90) c += 32;
    if (c !== folded.charCodeAt(k)) return -1;
  }
  return p;
}

/**
 * Throws a 400 when a route before the `chosen` one, matched in any case,
 * would take `path` once a character of {@link UNICODE_FOLDS} is read as its
 * letter: `/api/%C5%BFecret/x` reaches a case-insensitive `/api/` route
 * that bypasses auth, and a backend that reads it alike in any case serves
 * `/api/secret/x`, which has a route with auth. It cannot be handed to that
 * route instead, whose rewrite would cut the wrong length off the path.
 */
function refuseUnicodeFolds<T>(
  routes: readonly Route<T>[],
  chosen: number,
  path: string,
  method: string,
  headers: IncomingHttpHeaders,
  host: string | undefined,
): void {
  for (let j = 0; j < chosen; j++) {
    const route = routes[j];
    const end = endOfUnicodeFolded(path, route.folded);
    if (end < 0 || (!route.open && end < path.length && path.charCodeAt(end) !== 47)) continue;
    if (route.method !== null && route.method !== method) continue;
    if (route.headers !== null && !headersMatch(route.headers, headers)) continue;
    if (route.host !== null && !hostMatches(route.host, host)) continue;
    throw new HttpError(400, 'the path spells a letter of a prefix with a character that backends fold to it (ſ, K, ı, İ), which would route it elsewhere');
  }
}

/** ASCII letters in lower case, as Envoy folds a case-insensitive prefix. */
function foldCase(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** Whether `path` starts with `folded` (lower case), its ASCII letters compared in either case. Allocates nothing. */
function startsWithFolded(path: string, folded: string): boolean {
  if (path.length < folded.length) return false;
  for (let i = 0; i < folded.length; i++) {
    let c = path.charCodeAt(i);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== folded.charCodeAt(i)) return false;
  }
  return true;
}

function headersMatch(required: readonly (readonly [string, HeaderCondition])[], headers: IncomingHttpHeaders): boolean {
  for (let i = 0; i < required.length; i++) {
    const value = headers[required[i][0]];
    const wanted = required[i][1];
    if (wanted === true ? value === undefined : value !== wanted) return false;
  }
  return true;
}

/**
 * The path a matched request is forwarded with. `rewrite: ""` keeps the path;
 * otherwise the prefix is replaced by `rewrite`, with one slash where they
 * join: `/v1/hotels/bookings/x` under `/v1/hotels/` (or `/v1/hotels`) with the
 * default `/` becomes `/bookings/x`; under `/api/` with `/v2` it becomes `/v2/x`.
 */
export function rewritePath<T>(route: Route<T>, path: string): string {
  if (route.rewrite === '') return path;
  const rest = path.slice(route.cut);
  return rest === '' ? route.rewrite : route.rewriteBase + rest;
}
