/**
 * @module gateway/match/route-table
 * Which Mapping a request goes to, and the path it is forwarded with.
 *
 * Match order: `precedence` (higher first), then the longer `prefix` (for
 * `prefix_regex`, the longer pattern, as Emissary orders them), then the
 * heavier header matchers, then the heavier query matchers, weighed as
 * Emissary weighs them (the length of each name and value, `*` for any
 * value, one more for a pattern; `method` and a v2 `host` are headers
 * there), then the more specific
 * host (an exact name before a glob, a longer glob before a shorter, a glob
 * before a pattern), then an exact path (`prefix_exact`) before a prefix,
 * then config order; the first route that matches wins. Mappings with the
 * same match share its requests by weight (see ./match/canary).
 *
 * Prefix rule, on the normalised path: a prefix that ends in `/` matches any
 * path that starts with it (`/v1/` matches `/v1/x`, not `/v1`); a prefix
 * without a trailing slash matches itself and what lies below it on a segment
 * boundary (`/v1/hotels` matches `/v1/hotels` and `/v1/hotels/x`, never
 * `/v1/hotelsX`). `prefix_exact` matches the path itself only;
 * `prefix_regex` a path the pattern matches whole. Every rule sees the same
 * normalised path, so that no spelling of a path reaches a Mapping that its
 * normal form would not.
 *
 * `case_sensitive: false` matches the prefix in any case (ASCII letters, as
 * Envoy compares them), and so does a pattern that starts with `(?i)`. Such
 * a route takes a path only when no route before it in match order would
 * take the path in some other case: `/API/Admin/x` goes where `/api/admin/x`
 * goes, to the `/api/admin/` route with its auth, rather than to a
 * case-insensitive `/api/` route after it that bypasses auth, whose backend,
 * read alike in any case, would serve the admin path too. A path that such a
 * backend reads as a route before it only by folding a character beyond
 * ASCII to a letter (`ſ` to s) is a 400.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { HttpError } from '../../http';
import { endOfUnicodeFolded } from './case-fold';
import { RequestReading } from './conditions';
import { asksMethod } from './pseudo-headers';
import { otherReadings, type QueryCondition, type QueryReading } from './query';
import { createMatchMeter } from './regex';
import {
  compareRoutes,
  compileRoute,
  constraintsMatch,
  groupRoutesSteps,
  pathMatches,
  routeMatches,
  type Route,
  type RouteSpec,
} from './route';
import { substitute } from './substitution';
import { runAtOnce, sortSteps, type Steps } from '../slices';

export type { Route, RouteSpec } from './route';

/** Options of a route table. */
export interface RouteTableOptions<T = unknown> {
  /** Draws in [0, 1) that choose among Mappings sharing a match. Default `Math.random`. */
  readonly random?: () => number;
  /** The routes of the specs, already compiled, ordered and grouped by {@link compileRoutes}. */
  readonly compiled?: readonly Route<T>[];
  /** What the patterns may read for one routing decision (see ./match/regex). Default `DEFAULT_MATCH_BUDGET`. */
  readonly matchBudget?: number;
}

/** Compiles the routes of `specs`, in match order and grouped by match, a step a route (see ./slices). */
export function* compileRoutes<T>(specs: readonly RouteSpec<T>[]): Steps<Route<T>[]> {
  const routes: Route<T>[] = [];
  for (let i = 0; i < specs.length; i++) {
    routes.push(compileRoute(specs[i], i));
    yield;
  }
  const ordered = yield* sortSteps(routes, compareRoutes);
  yield* groupRoutesSteps(ordered);
  return ordered;
}

/**
 * `routes` with each target replaced by what `targetOf` makes of its route,
 * a step a route. In place, so that the groups keep their members: the
 * runtime orders, groups and checks a configuration's routes before it opens
 * a pool for any of them, and gives them their targets once they are to be
 * served.
 */
export function* retargetRoutes<P, T>(routes: Route<P>[], targetOf: (route: Route<P>) => T): Steps<Route<T>[]> {
  for (const route of routes) {
    (route as { target: unknown }).target = targetOf(route);
    yield;
  }
  return routes as unknown as Route<T>[];
}

/** The routes of one configuration, in match order. Built once, read by every request. */
export class RouteTable<T> {
  /** In match order. */
  readonly routes: readonly Route<T>[];
  /** Whether a route has query conditions: the query need not be read otherwise. */
  readonly readsQuery: boolean;
  /** The query conditions of every route. */
  private readonly queryConditions: readonly QueryCondition[];
  private readonly random: () => number;
  private readonly reading: RequestReading;
  private readonly hasConditions: boolean;
  /** Whether some route reads a request's headers or query, which a stage may edit after the match. */
  readonly readsHeadersOrQuery: boolean;
  /** The scheme of the request being matched, for `:scheme` conditions: set by each match, which is synchronous. */
  private scheme = 'http';

  constructor(specs: readonly RouteSpec<T>[], options: RouteTableOptions<T> = {}) {
    const routes = options.compiled ?? runAtOnce(compileRoutes(specs));
    this.routes = routes;
    this.readsQuery = routes.some((r) => r.conditions?.query);
    this.queryConditions = routes.flatMap((r) => r.conditions?.query ?? []);
    this.hasConditions = routes.some((r) => r.conditions !== null);
    this.readsHeadersOrQuery = routes.some(
      (r) =>
        r.headers !== null ||
        (r.conditions !== null && (r.conditions.headers ?? r.conditions.query ?? r.conditions.pseudo) !== null),
    );
    this.random = options.random ?? Math.random;
    this.reading = new RequestReading(createMatchMeter(options.matchBudget));
  }

  /**
   * The route for a normalised path, method, headers, host (by default the
   * Host header; `''` or `undefined` for none), raw query string (without
   * `?`) and scheme; `undefined` when none matches. Among routes with the same match,
   * one is drawn by weight.
   */
  match(
    path: string,
    method: string,
    headers: IncomingHttpHeaders,
    host: string | undefined = headers.host,
    query = '',
    scheme = 'http',
  ): Route<T> | undefined {
    this.reading.restart();
    this.scheme = scheme;
    return this.chosen(this.find(path, method, headers, host, query));
  }

  /** The member of `route`'s group a draw chooses, or `route` itself. */
  private chosen(route: Route<T> | undefined): Route<T> | undefined {
    return route === undefined || route.group === null ? route : route.group.pick(this.random());
  }

  /** The first route that matches, in match order (for a group, its first member), the query read as `queryReading` says. */
  private find(
    path: string,
    method: string,
    headers: IncomingHttpHeaders,
    host: string | undefined,
    query: string,
    queryReading: QueryReading = 'first',
  ): Route<T> | undefined {
    const routes = this.routes;
    const reading = this.reading;
    // Only conditions read it: a table without them does not touch it.
    if (this.hasConditions) reading.reset(query, host, queryReading, path, this.scheme);
    for (let i = 0; i < routes.length; i++) {
      const route = routes[i];
      if (!routeMatches(route, route.caseSensitive, path, method, headers, host, reading)) continue;
      if (route.caseSensitive || i === 0) return route;
      // A route before it that takes the path in another case takes it in this one too.
      for (let j = 0; j < i; j++) {
        if (routeMatches(routes[j], false, path, method, headers, host, reading)) return routes[j];
      }
      if (path.indexOf('%') !== -1) refuseUnicodeFolds(routes, i, path, method, headers, host, reading);
      return route;
    }
    return undefined;
  }

  /**
   * {@link match} for a request that a backend may read otherwise: a path
   * that may hold `;parameters`, with `plain` the path without them
   * (`withoutParameters` of gateway/request/path), which Tomcat, Spring and JAX-RS
   * backends route by; `overrides`, the methods a method override names
   * (gateway/request/override/method-override), which they act on instead of `method`; a
   * query argument given twice, which PHP reads by its last value where
   * Envoy and most others read the first. Throws a 400 {@link HttpError}
   * when those readings would be routed apart from the request: `/api;x/admin`
   * to an open `/` route, where the backend serves `/api/admin`, which has a
   * route with auth; a POST with `X-HTTP-Method-Override: DELETE` to a route
   * for POST that bypasses auth; `?role=user&role=admin` to a route that
   * bypasses auth, where `role=admin` has one with auth.
   */
  matchAlike(
    path: string,
    plain: string,
    method: string,
    headers: IncomingHttpHeaders,
    host: string | undefined,
    overrides?: readonly string[],
    query = '',
    scheme = 'http',
  ): Route<T> | undefined {
    this.reading.restart();
    this.scheme = scheme;
    const route = this.find(path, method, headers, host, query);
    if (route === undefined) return route;
    if (plain !== path && this.find(plain, method, headers, host, query) !== route) {
      throw HttpError.of('ROUTE_BY_PARAMETERS');
    }
    if (overrides !== undefined) {
      for (const other of overrides) {
        if (other === method) continue;
        if (
          this.find(path, other, headers, host, query) !== route ||
          (plain !== path && this.find(plain, other, headers, host, query) !== route)
        ) {
          throw HttpError.of('ROUTE_BY_METHOD_OVERRIDE');
        }
      }
    }
    if (this.readsQuery && query !== '') {
      for (const other of otherReadings(this.queryConditions, this.reading.parsedQuery(), this.reading.meter)) {
        if (this.find(path, method, headers, host, query, other) !== route) {
          throw HttpError.of('ROUTE_BY_QUERY_READING');
        }
      }
    }
    return this.chosen(route);
  }

  /**
   * Whether the method may decide where a request for `path` goes: some
   * route that takes the path, in any case, asks for a method. Any method:
   * an override may name one no list holds (`PURGE`, `PROPFIND`).
   */
  methodMayDecide(path: string): boolean {
    this.reading.restart();
    const meter = this.reading.meter;
    for (const route of this.routes)
      if (
        (route.method !== null || route.conditions?.method || asksMethod(route.conditions?.pseudo)) &&
        pathMatches(route, false, path, meter)
      )
        return true;
    return false;
  }
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
  reading: RequestReading,
): void {
  for (let j = 0; j < chosen; j++) {
    const route = routes[j];
    if (route.pattern !== null) continue;
    const end = endOfUnicodeFolded(path, route.folded);
    if (end < 0 || (end < path.length && (route.exact || (!route.open && path.charCodeAt(end) !== 47)))) continue;
    if (!constraintsMatch(route, method, headers, host, reading)) continue;
    throw HttpError.of('ROUTE_BY_LETTER_FOLD');
  }
}

/**
 * `path` with its matched prefix replaced by `replacement` (`base`, the
 * replacement without its trailing slash), with one slash where they join:
 * `/v1/hotels/bookings/x` under `/v1/hotels/` (or `/v1/hotels`) with `/`
 * becomes `/bookings/x`; under `/api/` with `/v2` it becomes `/v2/x`. A
 * route that matches whole paths (`prefix_exact`, `prefix_regex`) matched
 * all of it, as Envoy counts it, and the replacement is the whole path.
 */
export function replacePrefix<T>(route: Route<T>, path: string, replacement: string, base: string): string {
  if (route.pattern !== null) return replacement;
  const rest = path.slice(route.cut);
  return rest === '' ? replacement : base + rest;
}

/**
 * The path a matched request is forwarded with: `regex_rewrite` applied to
 * it when given (a result without a leading slash gets one); else, with
 * `rewrite: ""`, the path itself; else the path with its prefix replaced by
 * `rewrite` (see {@link replacePrefix}).
 */
export function rewritePath<T>(route: Route<T>, path: string): string {
  if (route.pathRewrite !== null) {
    const rewritten = substitute(route.pathRewrite, path);
    return rewritten.charCodeAt(0) === 47 ? rewritten : `/${rewritten}`;
  }
  if (route.rewrite === '') return path;
  return replacePrefix(route, path, route.rewrite, route.rewriteBase);
}
