/**
 * @module gateway/upstream/headers
 * The headers of a forward to a remote upstream (see `./forward`):
 * those it is sent (hop-by-hop removed, `X-Forwarded-For/-Proto/-Host`
 * and `Forwarded` set) and those copied from its answer.
 */
import type { Context } from 'koa';
import type { IncomingHttpHeaders } from 'node:http';
import { connectionNamed, headerName, isHopByHop, requestHost } from '../../http';
import { clientAddress, forwardedHeader } from '../request/headers/forwarded';

/**
 * The headers the upstream is sent. `X-Forwarded-*` and `Forwarded` are
 * written by the gateway, unless the route's `remove_request_headers` names
 * them: then they are not sent at all, as Envoy's router removes them after
 * its connection manager wrote them. `Host` is the upstream's own, or the
 * route's `host_rewrite`; the client's stays in `X-Forwarded-Host`.
 */
export function upstreamRequestHeaders(
  ctx: Context,
  upstreamHost: string,
  removed: readonly string[],
  hostRewrite: string | undefined,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  writeForwardedHeaders(out, ctx, removed);
  out.host = hostRewrite ?? upstreamHost;
  return out;
}

/**
 * Writes into `out` what the upstream is sent of the request's headers (see
 * {@link upstreamRequestHeaders}), but for its Host.
 */
export function writeForwardedHeaders(
  out: Record<string, string | string[]>,
  ctx: Context,
  removed: readonly string[],
): void {
  const incoming = ctx.req.headers;
  // What the client's Connection header named is gone already (dropNominatedHeaders).
  for (const name in incoming) {
    // HTTP/2's pseudo-headers (`:path`, `:authority`) are the request line's and Host's, sent as the upstream's own.
    if (isHopByHop(name) || name === 'host' || name === 'expect' || name.charCodeAt(0) === 58) continue;
    const value = incoming[name];
    if (value !== undefined) out[name] = value;
  }
  const client = clientAddress(ctx);
  const prior = incoming['x-forwarded-for'];
  if (!removed.includes('x-forwarded-for')) {
    out['x-forwarded-for'] = prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ${client}` : client;
  }
  const protocol = ctx.request.protocol;
  if (!removed.includes('x-forwarded-proto')) out['x-forwarded-proto'] = protocol;
  const host = requestHost(ctx);
  if (host && !removed.includes('x-forwarded-host')) out['x-forwarded-host'] = host;
  else delete out['x-forwarded-host'];
  // Not even the client's after remove_request_headers.
  if (removed.includes('forwarded')) delete out.forwarded;
  else out.forwarded = forwardedHeader(ctx, client, host, protocol);
}

/** Sets the upstream's answer headers on the response, but for those of its connection. */
export function copyResponseHeaders(ctx: Context, headers: IncomingHttpHeaders): void {
  const named = connectionNamed(headers.connection);
  // Straight on the response, which takes a list (Set-Cookie) as it is: ctx.set would copy every value into a string.
  const res = ctx.res;
  if (res.headersSent) return;
  for (const name in headers) {
    if (isHopByHop(name)) continue;
    if (named !== null && named.includes(name)) continue;
    const value = headers[name];
    if (value !== undefined) res.setHeader(headerName(name), value);
  }
}
