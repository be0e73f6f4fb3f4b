/**
 * @module gateway/request/secure-host
 * What a request meets of TLS before it is routed: the Host its host
 * chooses (a 404 when no Host serves it), what that Host answers a request
 * that came over cleartext (a 301 to `https://` on the same host, path and
 * query, Emissary's default; a 403 for Reject; nothing for Route), the
 * names a TLSContext redirects from cleartext, and the
 * X-Forwarded-Client-Cert the Module's policy tells upstreams; and a
 * request on an HTTPS connection made for another name, which its host's
 * TLS context would not have let through (a 421).
 *
 * The redirect keeps the host as the client wrote it: without a port, it
 * goes to 443, as a load balancer in front publishes HTTPS; with one (a
 * client on the gateway's own port), to the gateway's HTTPS port.
 */
import type { Context } from 'koa';
import type { TLSSocket } from 'node:tls';
import { HttpError, varyOnAccept } from '../../http';
import { forwardedClientCert, misdirected } from '../../tls';
import { hostMatches } from '../match/host-match';
import type { RouteTable } from '../match/route-table';
import type { RouteTarget, Runtime } from '../types';
import { chooseHost } from '../tls';

const XFCC = 'x-forwarded-client-cert';

/**
 * Refuses (421) a request on an HTTPS connection made for another name
 * than its host, when its host's TLS context asks for what that
 * connection's handshake did not (client certificates, versions, ciphers).
 */
export function refuseMisdirected(ctx: Context, host: string): void {
  const socket = ctx.req.socket;
  if ((socket as TLSSocket).encrypted === true && misdirected(socket, host))
    throw HttpError.of('MISDIRECTED', { host });
}

/** Whether a runtime has anything to say of a request's host or scheme before it is routed. */
export function hostsDecide(rt: Runtime): boolean {
  return rt.hosts !== null || rt.tls.redirected.length > 0;
}

/** `https://` on the same host (the gateway's HTTPS port when the client named a port), path and query. */
function httpsLocation(ctx: Context, host: string, httpsPort: number | undefined): string {
  const close = host.startsWith('[') ? host.indexOf(']') : -1;
  const colon = host.indexOf(':', close + 1);
  const name = colon === -1 ? host : host.slice(0, colon);
  const port = colon !== -1 && httpsPort !== undefined && httpsPort !== 443 ? `:${httpsPort}` : '';
  return `https://${name}${port}${ctx.req.url ?? '/'}`;
}

function redirect(ctx: Context, host: string, httpsPort: number | undefined): null {
  ctx.status = 301;
  ctx.redirect(httpsLocation(ctx, host, httpsPort));
  varyOnAccept(ctx);
  return null;
}

/**
 * The routes a request for `host` may take; null when it was answered with
 * a redirect. Throws the 404 of a host no Host serves and the 403 of a
 * Host that rejects cleartext.
 */
export function hostRoutes(
  ctx: Context,
  rt: Runtime,
  host: string,
  httpsPort: number | undefined,
): RouteTable<RouteTarget> | null {
  const secure = ctx.request.secure;
  if (!secure) {
    for (const pattern of rt.tls.redirected) {
      if (pattern === null || hostMatches(pattern, host)) return redirect(ctx, host, httpsPort);
    }
  }
  if (rt.hosts === null) return rt.table;
  const chosen = chooseHost(rt.hosts, host);
  if (chosen === undefined) throw HttpError.of('HOST_NOT_SERVED', { host: host === '' ? '(no host)' : host });
  if (!secure && chosen.secure) {
    if (chosen.insecure === 'Redirect') return redirect(ctx, host, httpsPort);
    if (chosen.insecure === 'Reject') throw HttpError.of('INSECURE_REJECTED', { host });
  }
  return chosen.table;
}

/** The client's own X-Forwarded-Client-Cert, kept only over a connection whose client certificate was verified. */
export function claimedClientCert(ctx: Context): string | undefined {
  const req = ctx.req;
  if ((req.socket as TLSSocket).authorized !== true) return undefined;
  const value = req.headers[XFCC];
  return Array.isArray(value) ? value.join(',') : value;
}

/** Sets the X-Forwarded-Client-Cert the Module's policy gives (the client's own is gone already). */
export function tellClientCert(ctx: Context, rt: Runtime, claimed: string | undefined): void {
  const value = forwardedClientCert(rt.tls.clientCert, ctx.req.socket as TLSSocket, claimed);
  if (value !== undefined) ctx.req.headers[XFCC] = value;
}
