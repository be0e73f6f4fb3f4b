/**
 * @module http/slashes
 * Canonical paths: collections end in `/`, and their slashless spelling
 * redirects there, keeping the client's prefix and the query string.
 */
import type { Context } from 'koa';
import { clientPath } from './request/client-path';
import { varyOnAccept } from './response/representation';

/**
 * Redirects to the same path with a trailing slash, keeping the query: 301
 * for GET and HEAD, 308 for other methods so that the method and body are
 * kept. The Location is the client's path for it ({@link clientPath}), so
 * that it works behind a Mapping that rewrote the path (`/a/1/messages` to
 * `/a/1/messages/`, not `/accounts/1/messages/`).
 *
 * The body is empty: Koa's `ctx.redirect` writes HTML or plain text, which
 * are no representation of the API (its collection answers 406 to an
 * `Accept` of `text/html`); the Location says all. Run it behind the
 * representation's negotiation, so that an `Accept` the API cannot write is
 * the 406 its collection answers.
 */
export function redirectToSlash(ctx: Context): void {
  const query = ctx.querystring ? `?${ctx.querystring}` : '';
  ctx.status = ctx.method === 'GET' || ctx.method === 'HEAD' ? 301 : 308;
  // Koa's redirect writes the Location encoded; its HTML or text body goes.
  ctx.redirect(clientPath(ctx, `${ctx.path}/${query}`));
  ctx.body = '';
  // An empty body is no text: no Content-Type for it.
  ctx.remove('Content-Type');
  varyOnAccept(ctx);
}
