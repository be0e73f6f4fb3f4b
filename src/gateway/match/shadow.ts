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
import { hostMatches, type HostPattern } from './host-match';
import { UNMETERED } from './regex';
import type { Route } from './route';
import type { Steps } from '../slices';

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

/** Comparisons made between two yields of {@link shadowProblemsSteps}. */
const COMPARISONS_PER_STEP = 64;

/**
 * The patterns that bypass auth and take, before it, the paths of a route
 * that needs it; `routes` in match order. A step every few comparisons (see
 * ../slices): a pattern is held against every prefix after it that needs auth.
 */
export function* shadowProblemsSteps(routes: readonly Route<unknown>[]): Steps<ShadowProblem[]> {
  const problems: ShadowProblem[] = [];
  // Those a pattern may shadow, in match order, with their place: the others are passed over once, not once a pattern.
  const guarded: [number, Route<unknown>][] = [];
  for (let i = 0; i < routes.length; i++) {
    const route = routes[i];
    if (route.pattern === null && !route.mapping.bypass_auth) guarded.push([i, route]);
    yield;
  }
  let compared = 0;
  let first = 0;
  for (let i = 0; i < routes.length; i++) {
    const pattern = routes[i];
    if (pattern.pattern === null || !pattern.mapping.bypass_auth) continue;
    while (first < guarded.length && guarded[first][0] <= i) first++;
    yield;
    for (let g = first; g < guarded.length; g++) {
      const route = guarded[g][1];
      if (++compared % COMPARISONS_PER_STEP === 0) yield;
      if (!overlap(pattern, route)) continue;
      if (!pathsOf(route).some((path) => pattern.pattern!.testExact(path, UNMETERED, 'url'))) continue;
      problems.push({
        route: pattern,
        message: `takes the paths of Mapping '${route.mapping.name}' (${route.prefix}), which needs auth, before it in match order (a pattern is ordered by its length, as in Emissary), and lets them through without auth: give '${route.mapping.name}' a higher precedence, or narrow the pattern`,
      });
    }
  }
  return problems;
}
