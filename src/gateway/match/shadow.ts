/**
 * @module gateway/match/shadow
 * A path pattern that bypasses auth, ordered before a prefix that needs it.
 *
 * Emissary orders a `prefix_regex` Mapping by the length of its pattern, as
 * if it were a prefix: `(?i)/(docs|blog)/.*` (with `bypass_auth`) comes
 * before `/docs/internal/`, and takes every path of it, without auth, unless
 * the prefix is given a higher `precedence`. The gateway orders patterns the
 * same way, so that Emissary's files route as they did, but refuses such a
 * configuration: a pattern that bypasses auth may not match, before it in
 * match order, the paths of a Mapping that needs auth (its prefix itself and
 * a path below it, on the hosts and methods both take). Patterns that match
 * only some paths below the prefix are allowed: which ones they are is what
 * the pattern was written for.
 */
import { hostMatches, type HostPattern } from '../host-match';
import type { Route } from './route';

/** A problem of a route, on its Mapping. */
export interface ShadowProblem {
  readonly route: Route<unknown>;
  readonly message: string;
}

/** Paths a prefix route surely takes: the prefix itself and a path below it. */
function pathsOf(route: Route<unknown>): string[] {
  if (route.exact) return [route.prefix];
  return [route.prefix, `${route.prefix}${route.open ? '' : '/'}x`];
}

/** Whether two routes' exact methods and host names leave a request both could take. */
function overlap(a: Route<unknown>, b: Route<unknown>): boolean {
  if (a.method !== null && b.method !== null && a.method !== b.method) return false;
  const exact = (host: HostPattern | null) => (host?.kind === 'exact' ? host.name : null);
  const ha = exact(a.host);
  const hb = exact(b.host);
  if (ha !== null && b.host !== null && !hostMatches(b.host, ha)) return false;
  if (hb !== null && a.host !== null && !hostMatches(a.host, hb)) return false;
  return true;
}

/** The patterns that bypass auth and take, before it, the paths of a route that needs it; `routes` in match order. */
export function shadowProblems(routes: readonly Route<unknown>[]): ShadowProblem[] {
  const problems: ShadowProblem[] = [];
  routes.forEach((pattern, i) => {
    if (pattern.pattern === null || !pattern.mapping.bypass_auth) return;
    for (const guarded of routes.slice(i + 1)) {
      if (guarded.pattern !== null || guarded.mapping.bypass_auth || !overlap(pattern, guarded)) continue;
      if (!pathsOf(guarded).some((path) => pattern.pattern!.testExact(path))) continue;
      problems.push({
        route: pattern,
        message: `takes the paths of Mapping '${guarded.mapping.name}' (${guarded.prefix}), which needs auth, before it in match order (a pattern is ordered by its length, as in Emissary), and lets them through without auth: give '${guarded.mapping.name}' a higher precedence, or narrow the pattern`,
      });
    }
  });
  return problems;
}
