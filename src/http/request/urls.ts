/**
 * @module http/request/urls
 * Absolute URLs for links, right under any mount prefix: the part of the
 * client's path that the mounts in front of this app stripped is put back,
 * and a gateway Mapping's rewrite undone (./client-path).
 */
import type { Context } from 'koa';
import { clientPath } from './client-path';

export { ORIGINAL_PATH } from './client-path';

/**
 * The prefix in front of the current app: `/v1` inside the v1 app, `/host/v1`
 * when the whole thing is mounted at `/host` in another app. Behind a Mapping
 * that rewrites to a path below the app's root, no prefix gives the client's
 * paths: the app's root is then written as the module answers it (see
 * {@link clientPath}), and links are built with {@link absoluteUrl}.
 */
export function basePath(ctx: Context): string {
  return clientPath(ctx, '');
}

/**
 * `ctx.host`, without the arrays Koa's getter builds to take the first of a
 * comma-separated list: the common `Host` of one authority (over HTTP/2 the
 * `:authority`, else `Host`, as Koa reads them) is read as it is, anything
 * else (a proxy's `X-Forwarded-Host`, a list, user information) is left to
 * Koa.
 */
export function requestHost(ctx: Context): string {
  const req = ctx.req;
  if (ctx.request.app.proxy) return ctx.host;
  const authority = req.httpVersionMajor >= 2 ? (req.headers[':authority'] as string | undefined) : undefined;
  const host = authority || req.headers.host;
  if (host === undefined || host === '') return '';
  if (host.indexOf(',') !== -1 || host.indexOf('@') !== -1 || host.trim() !== host) return ctx.host;
  return host;
}

/**
 * The absolute URL of a path of the current app (it may carry a query), as
 * the client reaches it: under the mount prefix, and under the prefix of a
 * Mapping that rewrote the path ({@link clientPath}). The origin is this server's
 * as the client named it (`Host`, or `X-Forwarded-Host/-Proto` when the app
 * trusts a proxy); never the request's `Origin` header, which koa 3's
 * `ctx.origin` returns. A request that named no host (HTTP/1.0, an empty
 * `Host`) gets the address it came to, as nginx falls back to its own
 * name; one that came over no socket, a root-relative URL.
 */
export function absoluteUrl(ctx: Context, pathInApp: string): string {
  const host = requestHost(ctx) || localAuthority(ctx);
  const origin = host ? `${ctx.protocol}://${host}` : '';
  return `${origin}${clientPath(ctx, pathInApp)}`;
}

/** An IPv4 address without the `::ffff:` a dual-stack socket puts before it; any other as it is. */
export function unmappedAddress(ip: string): string {
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}

/** The address and port the request's connection came to; '' when there is none. */
function localAuthority(ctx: Context): string {
  const socket = ctx.req.socket as { localAddress?: string; localPort?: number } | undefined;
  const address = socket?.localAddress;
  const port = socket?.localPort;
  if (!address || !port) return '';
  return hostPort(unmappedAddress(address), port);
}

const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):([0-9]{1,5})$/;

/** Whether `text` is `host:port` or `[v6]:port`, with a port from 1 to 65535. */
export function isHostPort(text: string): boolean {
  const match = HOST_PORT.exec(text);
  if (match === null) return false;
  const port = Number(match[2]);
  return port >= 1 && port <= 65535;
}

/** `host:port`, with an IPv6 host in brackets, as URLs, gRPC targets and messages write it. */
export function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

const USERINFO = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#@]*@/;
/** A query or fragment, which may carry a token (`?access_token=...`). */
const QUERY_OR_FRAGMENT = /([?#]).*$/s;

/**
 * An address as it may be shown in a message or a log line: the user and
 * password of a URL (`http://user:secret@host`) and its query or fragment
 * are replaced by `***`.
 */
export function redactAddress(address: string): string {
  return address.replace(USERINFO, '$1***@').replace(QUERY_OR_FRAGMENT, '$1***');
}
