/**
 * @module http/request/request-path
 * `setPath`, which changes `ctx.path` as Koa's setter does, for the
 * gateway's rewrites. Koa's setter parses the request URL, formats it back with
 * node:url and drops the parse it cached; on a plain request target (no
 * fragment, no whitespace: what every client sends) the new URL is the new
 * path and the query string as they were, which is written here directly.
 */
import type { Context } from 'koa';
import type { IncomingMessage } from 'node:http';

const SLASH = 47;

/**
 * Whether Koa reads `url` as its path and its query string alone: what
 * parseurl's fast path takes (a leading `/`, no `#`, no whitespace), so that
 * node:url formats it back unchanged.
 */
function isPlainTarget(url: string): boolean {
  if (url.charCodeAt(0) !== SLASH) return false;
  for (let i = 1; i < url.length; i++) {
    switch (url.charCodeAt(i)) {
      case 0x09:
      case 0x0a:
      case 0x0c:
      case 0x0d:
      case 0x20:
      case 0x23:
      case 0xa0:
      case 0xfeff:
        return false;
    }
  }
  return true;
}

/** Whether node:url would write `path` as it is (it escapes `?` and `#` in a path). */
function isPlainPath(path: string): boolean {
  return path.indexOf('?') === -1 && path.indexOf('#') === -1;
}

/**
 * Writes `path` into `req.url`, keeping its query string, when the URL is a
 * plain request target and `path` needs no escaping: the URL Koa's setter
 * writes then. Returns false, changing nothing, for anything else.
 */
export function setPlainPath(req: IncomingMessage, path: string): boolean {
  const url = req.url;
  if (typeof url !== 'string' || !isPlainTarget(url) || !isPlainPath(path)) return false;
  const q = url.indexOf('?');
  if (q === -1) {
    if (url !== path) req.url = path;
  } else if (q !== path.length || !url.startsWith(path)) {
    req.url = path + url.slice(q);
  }
  return true;
}

/**
 * Sets the request's path, keeping its query string: the URL Koa's
 * `ctx.path = path` writes, for less. Nothing changes when the path is
 * already `path`.
 */
export function setPath(ctx: Context, path: string): void {
  if (!setPlainPath(ctx.req, path)) ctx.path = path;
}
