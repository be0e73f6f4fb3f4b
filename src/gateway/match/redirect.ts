/**
 * @module gateway/match/redirect
 * Mappings with `host_redirect: true`, answered by the gateway itself, as
 * Envoy's `RedirectAction` answers them for Emissary: the status of
 * `redirect_response_code` (301 by default) and a `Location` on the host
 * `service` names, with
 *
 * - the scheme `service` gives (`https://host`), else the request's own;
 * - the port `service` gives, else none (the request's is not kept);
 * - the request's path (normalised), or `path_redirect`, or the path with
 *   its matched prefix replaced by `prefix_redirect` (the whole path for a
 *   `prefix_exact` or `prefix_regex` Mapping), or `regex_redirect` applied;
 * - the request's query as the client wrote it, unless `path_redirect`
 *   holds one of its own, which replaces it.
 *
 * The auth and rate-limit stages run before, as for any route (Envoy runs
 * its filters before the router answers); no service is called.
 */
import type { Context } from 'koa';
import { varyOnAccept } from '../../http';
import { REDIRECT_SERVICE } from '../config/mapping-match';
import type { MappingRecord } from '../config/schema';
import { replacePrefix, type Route } from './route-table';
import type { PatternProblem } from './conditions';
import type { Steps } from '../slices';
import { compileSubstitutionSteps, isSubstitution, substitute, type Substitution } from './substitution';

/** What a redirect Mapping answers, worked out when the configuration loads. */
export interface RedirectPlan {
  readonly status: 301 | 302 | 303 | 307 | 308;
  /** `http` or `https` when `service` names one; null for the request's own. */
  readonly scheme: string | null;
  /** `host[:port]`, as `service` names it. */
  readonly authority: string;
  /** `path_redirect`'s path, and its query (null when it has none). */
  readonly path: string | null;
  readonly query: string | null;
  /** `prefix_redirect`, and the same without its trailing slash, for joining. */
  readonly prefix: string | null;
  readonly prefixBase: string;
  /** `regex_redirect`. */
  readonly regex: Substitution | null;
}

/**
 * The plan of a Mapping with `host_redirect: true`, or the problem of its
 * `regex_redirect`, a step every millisecond or so of compiling it (see ../slices).
 */
export function* redirectPlanSteps(mapping: MappingRecord, maxSize: number): Steps<RedirectPlan | PatternProblem> {
  const [, scheme, authority] = REDIRECT_SERVICE.exec(mapping.service) ?? [];
  let regex: Substitution | null = null;
  if (mapping.regex_redirect !== undefined) {
    const compiled = yield* compileSubstitutionSteps(mapping.regex_redirect, maxSize);
    if (!isSubstitution(compiled)) return { path: `regex_redirect.${compiled.field}`, message: compiled.message };
    regex = compiled;
  }
  const target = mapping.path_redirect;
  const mark = target === undefined ? -1 : target.indexOf('?');
  const prefix = mapping.prefix_redirect ?? null;
  return {
    status: mapping.redirect_response_code ?? 301,
    scheme: scheme === undefined ? null : scheme.toLowerCase(),
    authority: authority ?? mapping.service,
    path: target === undefined ? null : mark === -1 ? target : target.slice(0, mark),
    query: target === undefined || mark === -1 ? null : target.slice(mark + 1),
    prefix,
    prefixBase: prefix !== null && prefix.endsWith('/') ? prefix.slice(0, -1) : (prefix ?? ''),
    regex,
  };
}

/** Whether a redirect plan came out, rather than a problem. */
export function isRedirectPlan(value: RedirectPlan | PatternProblem): value is RedirectPlan {
  return 'authority' in value;
}

/** The path of the redirect for a request on `path` (normalised), routed by `route`. */
function redirectPath<T>(plan: RedirectPlan, route: Route<T>, path: string): string {
  if (plan.path !== null) return plan.path;
  if (plan.prefix !== null) return replacePrefix(route, path, plan.prefix, plan.prefixBase);
  if (plan.regex !== null) {
    const rewritten = substitute(plan.regex, path);
    return rewritten.charCodeAt(0) === 47 ? rewritten : `/${rewritten}`;
  }
  return path;
}

/** Answers a request with the redirect: its status, `Location`, and Koa's short body saying where. */
export function answerRedirect<T>(ctx: Context, plan: RedirectPlan, route: Route<T>, path: string): void {
  const query = plan.query ?? ctx.querystring;
  const location = `${plan.scheme ?? ctx.protocol}://${plan.authority}${redirectPath(plan, route, path)}${query === '' ? '' : `?${query}`}`;
  ctx.status = plan.status;
  ctx.redirect(location);
  varyOnAccept(ctx);
}
