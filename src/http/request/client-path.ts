/**
 * @module http/request/client-path
 * The path a client uses for a path of the current app. Mounts strip a
 * prefix, which is put back; a gateway Mapping may also rewrite one
 * (`prefix: /m/, rewrite: /v1/messages/`), which is undone: a path under the
 * rewrite is written under the prefix the client used (`/v1/messages/2` is
 * `/m/2`), and a path outside it as the module answers it, under whatever
 * was in front of the gateway (`/v1/accounts/1`): the gateway's Mapping for
 * the module's own paths (the demo's, `rewrite: ""`) routes it.
 */
import type { Context } from 'koa';

/** State key under which a gateway records the normalised path the client asked for. */
export const ORIGINAL_PATH = 'gatehouseOriginalPath';

/**
 * State key of the prefix at which the current app is mounted within the
 * module the gateway handed the request to (`/v1` for an API version).
 * Recorded by {@link recordMount}; `''` (the module's root) when absent.
 */
export const APP_MOUNT = 'gatehouseAppMount';

// An absolute-form request target (`GET http://host/path HTTP/1.1`) starts
// with a scheme and authority that are no part of the path.
const SCHEME_AND_AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/** The path the client asked for: the one a gateway recorded, else the request's own. */
export function originalPath(ctx: Context): string {
  const recorded: unknown = ctx.state[ORIGINAL_PATH];
  if (typeof recorded === 'string') return recorded;
  let url = ctx.originalUrl;
  if (url[0] !== '/') url = url.replace(SCHEME_AND_AUTHORITY, '') || '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Middleware of an app that is always mounted inside its module (an API
 * version): records the prefix the mount in front of it stripped. koa-mount
 * and the gateway's in-process mounts set `ctx.mountPath` just before they
 * enter the app, so it is this app's; in an app that nothing mounted it
 * could be an outer mount's, which is why only such apps record it.
 */
export function recordMount(ctx: Context, next: () => Promise<unknown>): Promise<unknown> {
  const mount = (ctx as Context & { mountPath?: unknown }).mountPath;
  ctx.state[APP_MOUNT] = typeof mount === 'string' && mount !== '/' ? mount : '';
  return next();
}

/** What the gateway's Mapping says, as far as links need it (`ctx.state.mapping`). */
interface RoutedMapping {
  readonly prefix?: unknown;
  readonly rewrite?: unknown;
  readonly prefix_exact?: unknown;
  readonly prefix_regex?: unknown;
  readonly regex_rewrite?: unknown;
}

/**
 * How this request's Mapping maps the module's paths to the client's: a
 * module path at or under `module` is the client's `client` followed by
 * the rest (`whole`: only `module` itself, for a Mapping that matched one
 * path or a pattern); any other path is `outer` followed by itself.
 */
interface PathMap {
  readonly client: string;
  readonly module: string;
  readonly whole: boolean;
  readonly outer: string;
}

/** The prefix the mounts in front of the app stripped, when the client's path ends with the app's. */
function strippedPrefix(original: string, current: string): string {
  if (original === current) return '';
  if (original.endsWith(current)) return original.slice(0, original.length - current.length);
  // koa-mount maps `/v1` to `/` inside the app.
  if (current === '/') return original.endsWith('/') ? original.slice(0, -1) : original;
  return '';
}

/**
 * What was in front of the gateway's paths (a host app that mounted it):
 * `client` less the Mapping's prefix, which the client may have written in
 * another case. `''` when that cannot be told (a pattern).
 */
function outerOf(client: string, mapping: RoutedMapping): string {
  if (mapping.prefix_regex === true || typeof mapping.prefix !== 'string') return '';
  const prefix = mapping.prefix.endsWith('/') ? mapping.prefix.slice(0, -1) : mapping.prefix;
  return client.toLowerCase().endsWith(prefix.toLowerCase()) ? client.slice(0, client.length - prefix.length) : '';
}

/**
 * Undoes the Mapping's rewrite for this request: `module` is the path the
 * gateway handed the module, `original` the client's. The gateway forwards
 * `rewrite` with the rest of the client's path after the prefix (or the
 * rewrite alone when nothing follows the prefix, and always for a Mapping of
 * one path or a pattern); so the rest is read off the module's path and the
 * client's prefix is what comes before it in the client's. Undefined when
 * the two do not fit that (a `regex_rewrite`, which cannot be undone).
 */
function routedMap(mapping: RoutedMapping, original: string, module: string): PathMap | undefined {
  const rewrite = mapping.rewrite;
  if (typeof rewrite !== 'string' || mapping.regex_rewrite !== undefined) return undefined;
  if (rewrite === '') {
    // The module sees the gateway's path: only what is in front of the gateway differs.
    if (!original.endsWith(module)) return undefined;
    const outer = original.slice(0, original.length - module.length);
    return { client: outer, module: '', whole: false, outer };
  }
  if (mapping.prefix_exact === true || mapping.prefix_regex === true) {
    return module === rewrite
      ? { client: original, module, whole: true, outer: outerOf(original, mapping) }
      : undefined;
  }
  const base = rewrite.endsWith('/') ? rewrite.slice(0, -1) : rewrite;
  if (!module.startsWith(base)) return undefined;
  const rest = module.slice(base.length);
  if (rest !== '' && rest.charCodeAt(0) !== 47) return undefined;
  let client: string;
  if (original.endsWith(rest)) client = original.slice(0, original.length - rest.length);
  // `/m` to a `rewrite: /v1/messages/`: the rewrite was written whole.
  else if (module === rewrite) client = original;
  else return undefined;
  return { client, module: base, whole: false, outer: outerOf(client, mapping) };
}

/** The client's path for `path` of the module, by `map`. */
function throughMap(map: PathMap, path: string): string {
  const under = map.module;
  if (map.whole) return path === under ? map.client : map.outer + path;
  if (path.startsWith(under) && (path.length === under.length || path.charCodeAt(under.length) === 47)) {
    return map.client + path.slice(under.length);
  }
  return map.outer + path;
}

/**
 * The path (and query, when `pathInApp` has one) a client uses for
 * `pathInApp`, a path of the current app. Behind a gateway that recorded the
 * client's path and its Mapping, the Mapping's rewrite is undone (see the
 * module comment); otherwise the prefix the mounts stripped is put back.
 */
export function clientPath(ctx: Context, pathInApp: string): string {
  const original = originalPath(ctx);
  const q = pathInApp.indexOf('?');
  const path = q === -1 ? pathInApp : pathInApp.slice(0, q);
  const query = q === -1 ? '' : pathInApp.slice(q);
  // Only what the gateway recorded for the request the module serves: while
  // the gateway itself routes, state.mapping is set and its path not yet.
  const mapping =
    typeof ctx.state[ORIGINAL_PATH] === 'string' ? (ctx.state.mapping as RoutedMapping | undefined) : undefined;
  if (mapping !== undefined && mapping !== null) {
    const recorded: unknown = ctx.state[APP_MOUNT];
    const mount = typeof recorded === 'string' ? recorded : '';
    const map = requestMap(ctx, mapping, original, mount + ctx.path);
    if (map !== undefined) return throughMap(map, mount + path) + query;
  }
  return strippedPrefix(original, ctx.path) + pathInApp;
}

/** The request's {@link PathMap}, with the module path it was made for. */
const REQUEST_MAP = Symbol('client path map');

interface MadeMap {
  readonly module: string;
  readonly map: PathMap | undefined;
}

/**
 * {@link routedMap} for this request, made once for the module path it was
 * asked with: a page of twenty items asks for forty links, all by one map.
 */
function requestMap(ctx: Context, mapping: RoutedMapping, original: string, module: string): PathMap | undefined {
  const state = ctx.state as Record<symbol, MadeMap | undefined>;
  const made = state[REQUEST_MAP];
  if (made !== undefined && made.module === module) return made.map;
  const map = routedMap(mapping, original, module);
  state[REQUEST_MAP] = { module, map };
  return map;
}
