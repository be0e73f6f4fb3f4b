/**
 * @module gateway/upstream/grpc/headers
 * The headers of a gRPC call sent on to its upstream over HTTP/2: those of
 * any forward (`../headers`: hop-by-hop removed, `X-Forwarded-*` written,
 * the user the auth service named kept), with the request line and Host
 * as pseudo-headers, and the `te: trailers` gRPC requires. A gRPC-Web
 * call goes up as gRPC, as Envoy's grpc_web filter sends it: `content-type:
 * application/grpc`, no `content-length` (the length of the text it was),
 * and `grpc-accept-encoding: identity` unless it names its own.
 */
import type { Context } from 'koa';
import type { OutgoingHttpHeaders } from 'node:http2';
import type { RouteUpstream } from '../endpoints/clusters';
import { writeForwardedHeaders } from '../headers';
import type { ForwardOptions } from '../types';

const NONE: readonly string[] = [];

/** The headers of the upstream's stream: the call's metadata and the gateway's own, pseudo-headers first. */
export function grpcRequestHeaders(
  ctx: Context,
  upstream: RouteUpstream,
  options: ForwardOptions,
  web = false,
): OutgoingHttpHeaders {
  const out: Record<string, string | string[]> = {
    ':method': ctx.req.method!,
    ':scheme': upstream.address.secure ? 'https' : 'http',
    ':authority': options.hostRewrite ?? upstream.address.host,
    ':path': options.path,
  };
  writeForwardedHeaders(out, ctx, options.removedHeaders ?? NONE);
  out.te = 'trailers';
  if (web) {
    out['content-type'] = 'application/grpc';
    if (out['content-length'] !== undefined) delete out['content-length'];
    // A browser's client reads no compressed message.
    out['grpc-accept-encoding'] ??= 'identity';
  }
  return out;
}
