/**
 * @module http/urls
 * Absolute URLs for links, right under any mount prefix: the part of the
 * client's path that the mounts in front of this app stripped is put back.
 */
import type { Context } from 'koa';

/** State key under which a gateway records the normalised path the client asked for. */
export const ORIGINAL_PATH = 'gatehouseOriginalPath';

function originalPath(ctx: Context): string {
  const recorded = ctx.state[ORIGINAL_PATH];
  if (typeof recorded === 'string') return recorded;
  const url = ctx.originalUrl;
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * The prefix in front of the current app: `/v1` inside the v1 app, `/host/v1`
 * when the whole thing is mounted at `/host` in another app.
 */
export function basePath(ctx: Context): string {
  const original = originalPath(ctx);
  const current = ctx.path;
  if (original === current) return '';
  if (original.endsWith(current)) return original.slice(0, original.length - current.length);
  // koa-mount maps `/v1` to `/` inside the app.
  if (current === '/') return original.endsWith('/') ? original.slice(0, -1) : original;
  return '';
}

/** The absolute URL of a path of the current app. */
export function absoluteUrl(ctx: Context, pathInApp: string): string {
  return `${ctx.origin}${basePath(ctx)}${pathInApp}`;
}
