/**
 * @module gateway/request/headers/forwarded
 * What the gateway tells the services behind it of the client: its address,
 * and this hop's element of `Forwarded` (RFC 7239), the same to a remote
 * upstream and to a remote auth service.
 */
import type { Context } from 'koa';
import { unmappedAddress } from '../../../http';

/** The client's address, an IPv4 one without the `::ffff:` of a dual-stack socket. */
export function clientAddress(ctx: Context): string {
  return unmappedAddress(ctx.req.socket.remoteAddress ?? '');
}

/**
 * The client's address as the gateway trusts it, as Envoy's `remote_address`
 * with one trusted hop: the peer, or behind a proxy trusted with
 * `trustProxy`, the last address of its `X-Forwarded-For`, which that proxy
 * wrote. The first one, which Koa's `ctx.ip` reads, is whatever the client
 * sent that proxy: a rate limit keyed on it would be a limit each client
 * sets for itself.
 */
export function trustedClientAddress(ctx: Context): string {
  const forwarded = ctx.request.app.proxy ? ctx.req.headers['x-forwarded-for'] : undefined;
  if (forwarded !== undefined) {
    const list = Array.isArray(forwarded) ? forwarded.join(',') : forwarded;
    const last = list.slice(list.lastIndexOf(',') + 1).trim();
    if (last !== '') return unmappedAddress(last);
  }
  return clientAddress(ctx);
}

/** An RFC 9110 token: a Forwarded parameter value that needs no quotes. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * This hop's element of `Forwarded` (RFC 7239 §4): the client's address (an
 * IPv6 one quoted, in brackets), the Host it asked for and the scheme, as
 * `X-Forwarded-For`, `-Host` and `-Proto` tell them.
 */
function forwardedElement(client: string, host: string, protocol: string): string {
  const node = client === '' ? 'unknown' : client.includes(':') ? `"[${client}]"` : client;
  if (host === '') return `for=${node};proto=${protocol}`;
  return `for=${node};host=${TOKEN.test(host) ? host : `"${host}"`};proto=${protocol}`;
}

/**
 * The `Forwarded` the gateway sends on. Envoy passes a client's own on
 * untouched, so that a client could name any address, host and scheme to a
 * service that reads RFC 7239 (Spring's ForwardedHeaderFilter, Keycloak,
 * Jetty), which ask the proxy at the edge to write it. The gateway does: its
 * own element replaces the client's, or, behind a proxy it trusts
 * (`trustProxy`), is appended to that proxy's, as `X-Forwarded-For` is.
 */
export function forwardedHeader(ctx: Context, client: string, host: string, protocol: string): string {
  const element = forwardedElement(client, host, protocol);
  const prior = ctx.req.headers.forwarded;
  return prior !== undefined && ctx.request.app.proxy ? `${prior}, ${element}` : element;
}
