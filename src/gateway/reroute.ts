/**
 * @module gateway/reroute
 * The route again once the auth service has edited the request, as Emissary
 * has Envoy clear its route cache after ext_authz: a header (or query
 * argument) the auth service set may choose another Mapping, whose labels,
 * edits and upstream then apply. Only an auth service's edits re-route; a
 * request it leaves as it was keeps its route, and a canary keeps the
 * member drawn for it.
 */
import type { Context } from 'koa';
import { HttpError, requestHost } from '../http';
import type { Route } from './match/route';
import { overriddenMethods } from './request/override/method-override';
import { unsafeEscapeError, withoutParameters } from './request/path';
import type { RouteTarget, Runtime } from './types';

/** State key a stage sets when it edited the request's headers or query: the route is to be chosen again. */
export const REROUTE_STATE = 'gatehouseReroute';

/** State key of the route a request was re-routed to, for what answers it afterwards (its error overrides). */
export const REROUTED_STATE = 'gatehouseRerouted';

/** Marks a request whose headers or query a stage edited. */
export function markEdited(ctx: Context): void {
  ctx.state[REROUTE_STATE] = true;
}

/**
 * The route for the request as the auth service left it: `route` when it
 * edited nothing, or when the match is the same (or another member of the
 * same canary group). Throws a 404 when no route takes the edited request,
 * as Envoy's router finds none, and what matching refuses (a method
 * override or a path escape that the new route would read otherwise).
 */
export function reroute(ctx: Context, rt: Runtime, route: Route<RouteTarget>, path: string): Route<RouteTarget> {
  // A table whose routes read no header or query would match the edited request alike.
  if (ctx.state[REROUTE_STATE] !== true || !rt.table.readsHeadersOrQuery) return route;
  const headers = ctx.req.headers;
  const query = ctx.querystring;
  const again = rt.table.matchAlike(
    path,
    withoutParameters(path),
    ctx.method,
    headers,
    requestHost(ctx),
    overriddenMethods(headers, query),
    query,
    ctx.protocol,
  );
  if (again === undefined) throw HttpError.of('NOT_FOUND');
  if (again === route || (again.group !== null && again.group === route.group)) return route;
  if (!again.mapping.allow_unsafe_path_escapes) {
    const unsafe = unsafeEscapeError(path);
    if (unsafe !== undefined) throw HttpError.of(unsafe);
  }
  ctx.state[REROUTED_STATE] = again;
  return again;
}
