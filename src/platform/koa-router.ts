/**
 * @module platform/koa-router
 * What Gatehouse reads of koa-router beyond its typings, to dispatch its
 * routes as `router.routes()` does: the router's options and host test, and
 * each layer's name, captures and params. Written against koa-router 14.0.0
 * (pinned in package.json); test/platform/koa-router.test.ts fails, naming
 * the version, when a release changes any of it.
 */
import type Router from 'koa-router';

/** The koa-router release these functions were written against. */
export const KOA_ROUTER_VERSION = '14.0.0';

/** What koa-router 14 keeps on a router and its types do not say. */
interface RouterFields {
  opts: { routerPath?: string };
  exclusive?: boolean;
  host?: unknown;
  matchHost(host: string): boolean;
}

/** The layer methods koa-router calls, as koa-router 14 has them. */
interface LayerFields {
  name: string | null;
  captures(path: string, captures?: string[]): string[];
  params(path: string, captures: string[], params?: Record<string, string>): Record<string, string>;
}

/** The path `router` matches with, when given as its `routerPath` option. */
export function routerPathOption(router: Router): string | undefined {
  return (router as unknown as RouterFields).opts.routerPath;
}

/** Whether `router` runs only the most specific of the layers a request matched (its `exclusive` option). */
export function runsMostSpecificOnly(router: Router): boolean {
  return (router as unknown as RouterFields).exclusive === true;
}

/** Whether `router` takes the request of `ctx`: always for a router bound to no host, whose `ctx.host` is not read. */
export function routerTakesHost(router: Router, ctx: { readonly host: string }): boolean {
  const fields = router as unknown as RouterFields;
  return !fields.host || fields.matchHost(ctx.host);
}

/** The name a layer was declared with, or null. */
export function layerName(layer: Router.Layer): string | null {
  return (layer as unknown as LayerFields).name;
}

/** The captures of `path` by `layer`'s pattern, as koa-router sets `ctx.captures`. */
export function layerCaptures(layer: Router.Layer, path: string, captures?: string[]): string[] {
  return (layer as unknown as LayerFields).captures(path, captures);
}

/** The named params of `path` by `layer`'s pattern, added to `params`, as koa-router sets `ctx.params`. */
export function layerParams(
  layer: Router.Layer,
  path: string,
  captures: string[],
  params?: Record<string, string>,
): Record<string, string> {
  return (layer as unknown as LayerFields).params(path, captures, params);
}
