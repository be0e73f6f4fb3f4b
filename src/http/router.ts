/**
 * @module http/router
 * koa-router's dispatch without its per-request chain building. Routes are
 * declared on a koa-router `Router` and matched by its layers' own `match()`, and
 * `allowedMethods()` answers 405 and OPTIONS from what this sets, as with
 * `router.routes()`; but `routes()` builds a new array and composes it on
 * every request, where this composes the chain of each list of matched
 * layers once and reuses it.
 */
import type { Context, Middleware, Next } from 'koa';
import compose from 'koa-compose';
import type Router from 'koa-router';
import {
  layerCaptures,
  layerName,
  layerParams,
  routerPathOption,
  routerTakesHost,
  runsMostSpecificOnly,
} from '../platform';

type Layer = Router.Layer;

/** What koa-router sets on the context, and reads back from it (`allowedMethods` reads `matched`). */
interface RoutedContext {
  matched?: Layer[];
  router?: Router;
  captures?: string[];
  params?: Record<string, string>;
  routerPath?: string;
  routerName?: string | null;
  newRouterPath?: string;
  _matchedRoute?: string | RegExp;
  _matchedRouteName?: string;
}

/** A composed chain, and what it was composed from: its layers, and how long each one's stack was. */
interface Chain {
  readonly layers: readonly Layer[];
  readonly sizes: readonly number[];
  readonly run: compose.ComposedMiddleware<Context>;
}

/** What koa-router's `Router#match` returns. */
interface Matched {
  path: Layer[];
  pathAndMethod: Layer[];
  route: boolean;
}

/**
 * `router.match(path, method)` as koa-router 14 finds it, each layer by its
 * own `match()`, without the debug line it formats for every layer it tries
 * (ten a request for a router of ten routes, with nobody listening).
 */
function matchLayers(router: Router, path: string, method: string): Matched {
  const stack = router.stack;
  const matched: Matched = { path: [], pathAndMethod: [], route: false };
  for (let i = 0; i < stack.length; i++) {
    const layer = stack[i];
    if (!layer.match(path)) continue;
    matched.path.push(layer);
    if (layer.methods.length === 0 || layer.methods.includes(method)) {
      matched.pathAndMethod.push(layer);
      if (layer.methods.length > 0) matched.route = true;
    }
  }
  return matched;
}

/** Chains kept per most specific layer; beyond this many (which no real router reaches) they are composed per request. */
const MAX_CHAINS_PER_LAYER = 16;

function sameChain(chain: Chain, layers: readonly Layer[]): boolean {
  if (chain.layers.length !== layers.length) return false;
  for (let i = 0; i < layers.length; i++) {
    // A stack that grew (router.param() after the first request) needs a new chain.
    if (chain.layers[i] !== layers[i] || chain.sizes[i] !== layers[i].stack.length) return false;
  }
  return true;
}

/**
 * The middleware of `router`, as `router.routes()` behaves: on a match, it
 * sets `ctx.matched`, `ctx.router`, `ctx._matchedRoute` (and its name), then
 * runs each matched layer's middleware after setting `ctx.captures`,
 * `ctx.params`, `ctx.routerPath` and `ctx.routerName` for it; otherwise it
 * calls `next`. Routes declared later are matched too, and a layer whose
 * stack changes later (`router.param()` after the first request) gets a new
 * chain.
 */
export function routes(router: Router): Middleware {
  // The path a request matched with, for the chain composed once to read: a
  // key per router, so that a router dispatching inside another keeps its own.
  const routedPath = Symbol('routed path');
  const chains = new Map<Layer, Chain[]>();

  /** Sets what koa-router sets for `layer`, then goes on to the layer's middleware. */
  function enter(layer: Layer): Middleware {
    const name = layerName(layer);
    return (ctx, next) => {
      const c = ctx as Context & RoutedContext;
      const path = (ctx as unknown as Record<symbol, string>)[routedPath];
      c.captures = layerCaptures(layer, path, c.captures);
      const params = layerParams(layer, path, c.captures, c.params);
      (ctx.request as Context['request'] & { params?: Record<string, string> }).params = params;
      c.params = params;
      c.routerPath = layer.path;
      c.routerName = name;
      c._matchedRoute = layer.path;
      if (name) c._matchedRouteName = name;
      return next();
    };
  }

  function composeChain(layers: readonly Layer[]): Chain {
    const middleware: Middleware[] = [];
    for (const layer of layers) middleware.push(enter(layer), ...(layer.stack as Middleware[]));
    return { layers, sizes: layers.map((layer) => layer.stack.length), run: compose(middleware) };
  }

  function chainOf(layers: readonly Layer[]): Chain {
    const last = layers[layers.length - 1];
    let known = chains.get(last);
    if (known !== undefined) {
      for (let i = 0; i < known.length; i++) if (sameChain(known[i], layers)) return known[i];
    } else {
      chains.set(last, (known = []));
    }
    // A copy: koa-router hands out a new array per match, but keeps nothing of it.
    const chain = composeChain(layers.slice());
    if (known.length < MAX_CHAINS_PER_LAYER) known.push(chain);
    return chain;
  }

  const dispatch = (ctx: Context, next: Next): Promise<unknown> => {
    const c = ctx as Context & RoutedContext;
    // Host is read only for a router bound to a host: the getter parses Host (or X-Forwarded-Host).
    if (!routerTakesHost(router, ctx)) return next();
    // Read from the request itself: ctx's getters only pass on to it.
    const request = ctx.request;
    const path = routerPathOption(router) || c.newRouterPath || request.path || (c.routerPath as string);
    const matched = matchLayers(router, path, request.method);
    if (c.matched) c.matched.push(...matched.path);
    else c.matched = matched.path;
    c.router = router;
    if (!matched.route) return next();

    const layers = matched.pathAndMethod;
    const mostSpecific = layers[layers.length - 1];
    c._matchedRoute = mostSpecific.path;
    const name = layerName(mostSpecific);
    if (name) c._matchedRouteName = name;
    (ctx as unknown as Record<symbol, string>)[routedPath] = path;
    return chainOf(runsMostSpecificOnly(router) ? [mostSpecific] : layers).run(ctx, next);
  };
  // As koa-router marks its own: `otherRouter.use(routes(router))` nests the routes.
  (dispatch as Middleware & { router?: Router }).router = router;
  return dispatch;
}

/**
 * `router.allowedMethods()` for a path some route has: 405 with `Allow`,
 * and OPTIONS answered. koa-router answers 501 to a method no route of the
 * router takes at all (`LOCK`, `PURGE`), where the gateway's own paths
 * answer 405 to it: 405 here too, as for any method the path does not
 * serve. It also answers 501, with an empty `Allow`, on a path no route
 * has; that path is left to the app's 404 here, whatever the method.
 */
export function allowedMethods(router: Router): Middleware {
  const answer = router.allowedMethods() as Middleware;
  const notImplementedAs405 = (ctx: Context) => {
    if (ctx.status === 501 && ctx.body == null) ctx.status = 405;
  };
  return (ctx, next) => {
    // Set by the dispatch in front (ours or koa-router's), empty when no route has the path.
    const matched = (ctx as Context & RoutedContext).matched;
    return matched === undefined || matched.length === 0
      ? next()
      : (answer(ctx, next) as Promise<void>).then(() => notImplementedAs405(ctx));
  };
}
