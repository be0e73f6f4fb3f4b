/**
 * @module http/slashes
 * Canonical paths: collections end in `/`, and their slashless spelling
 * redirects there, keeping the mount prefix and the query string.
 */
import type { Context } from 'koa';
import { varyOnAccept } from './response/representation';
import { basePath } from './request/urls';

/**
 * Redirects to the same path with a trailing slash: 301 for GET and HEAD, 308
 * for other methods so that the method and body are kept. The response varies
 * on `Accept` wherever it is used, as every response does: Koa writes the
 * redirect's body in HTML or in plain text as `Accept` says.
 */
export function redirectToSlash(ctx: Context): void {
  const query = ctx.querystring ? `?${ctx.querystring}` : '';
  ctx.status = ctx.method === 'GET' || ctx.method === 'HEAD' ? 301 : 308;
  ctx.redirect(`${basePath(ctx)}${ctx.path}/${query}`);
  varyOnAccept(ctx);
}
