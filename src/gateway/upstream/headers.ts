/**
 * @module gateway/upstream/headers
 * What forwarding to a remote upstream is made of (see `./forward`):
 * the headers it is sent (hop-by-hop removed, `X-Forwarded-For/-Proto/-Host`
 * and `Forwarded` set) and those copied from its answer.
 */
import type { Context } from 'koa';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { connectionNamed, headerName, requestHost } from '../../http';
import type { StreamedBodyGuard } from '../request/body-limit';
import type { GatewayEvents } from '../events';
import { isHopByHop } from '../request/headers/hop-by-hop';
import { clientAddress, forwardedHeader } from '../request/headers/forwarded';

export function ignore(): void {}

/**
 * undici detaches the socket from a request body it is done with (so that
 * destroying the body cannot close the connection), but Koa reads the client
 * address and protocol from `req.socket`, and so may anything that runs after
 * the gateway (its access log, a host app): once the body is closed, the
 * socket goes back.
 */
export function keepSocket(req: IncomingMessage): void {
  const socket = req.socket;
  req.once('close', () => {
    if (req.socket === null) req.socket = socket;
  });
}

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
  const incoming = ctx.req.headers;
  // What the client's Connection header named is gone already (dropNominatedHeaders).
  const out: Record<string, string | string[]> = {};
  for (const name in incoming) {
    if (isHopByHop(name) || name === 'host' || name === 'expect') continue;
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
  out.host = hostRewrite ?? upstreamHost;
  return out;
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

/** How one request is forwarded: its path (base, rewrite and query applied) and limits. */
export interface ForwardOptions {
  readonly path: string;
  /** How long to wait for the response headers once the request body is sent, and then between parts of the answer; 0 for ever. */
  readonly timeoutMs: number;
  /** The counter of a body of unknown length, when there is one. */
  readonly guard: StreamedBodyGuard | null;
  /** The mapping's name, for {@link GatewayEvents.upstreamError}. */
  readonly route?: string;
  readonly events?: GatewayEvents;
  /** The route's `remove_request_headers` (lower case): an `X-Forwarded-*` among them is not written. */
  readonly removedHeaders?: readonly string[];
  /** The route's `host_rewrite`: the Host the upstream is sent instead of its own `host:port`. */
  readonly hostRewrite?: string;
  /** The largest request body a retry sends again; a longer one is streamed, and not retried. Default 1 MiB. */
  readonly retryBufferBytes?: number;
}
