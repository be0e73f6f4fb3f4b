/**
 * @module gateway/upstream/grpc/forward
 * A gRPC call forwarded to its route's upstream cluster: an endpoint picked
 * by the balancer, its HTTP/2 connection made or reused, and the call sent
 * on it (./call).
 *
 * `retry_policy` applies where nothing of the call has gone out yet: a
 * connection that cannot be made (`connect-failure`, `reset`, `5xx`,
 * `gateway-error`) is tried again on the next endpoint, after Envoy's
 * jittered back-off. Once the client's messages stream to an upstream they
 * cannot be sent twice, so a call is never retried after that.
 */
import type { Context } from 'koa';
import type { ClientHttp2Session } from 'node:http2';
import { HttpError } from '../../../http';
import type { RouteUpstream } from '../endpoints/clusters';
import type { Endpoint } from '../endpoints/endpoint';
import { requestKey } from '../endpoints/hash-key';
import { backoffMs, retriesFailure } from '../retry';
import { servernameOf } from '../service';
import type { ForwardOptions } from '../types';
import { GrpcCall } from './call';
import { sessionOf, type UpstreamSession } from './session';
import { grpcWebOf, type GrpcWebCall } from './web';

/** Resolves once `session` is connected; rejects with why it could not be. */
function connected(session: ClientHttp2Session): Promise<void> {
  if (session.destroyed) return Promise.reject(new Error('the connection closed'));
  if (!session.connecting) return Promise.resolve();
  return new Promise((resolve, reject) => {
    let failure: Error | undefined;
    const onError = (err: Error): void => {
      failure = err;
    };
    const onClose = (): void => reject(failure ?? new Error('the connection closed'));
    session.once('error', onError);
    session.once('close', onClose);
    session.once('connect', () => {
      session.off('error', onError);
      session.off('close', onClose);
      resolve();
    });
  });
}

/**
 * Sends the gRPC call of `ctx` to the route's upstream and puts its answer
 * on `ctx`, streaming. Rejects with an {@link HttpError} (503, 504) when the
 * upstream gives no answer to stream, and (505) for a call over HTTP/1.1
 * that is not gRPC-Web: its status would not reach the client. A call to an endpoint whose
 * connection is up goes at once; the others wait for a connection, and
 * try again as the route's `retry_policy` says.
 */
export function forwardGrpc(ctx: Context, upstream: RouteUpstream, options: ForwardOptions): Promise<void> {
  const web = grpcWebOf(ctx);
  // Answered at once, before the upstream hears of it: HTTP/1.1 carries no trailers most clients read.
  if (web === null && ctx.req.httpVersionMajor < 2) return Promise.reject(HttpError.of('GRPC_OVER_HTTP1'));
  const cluster = upstream.cluster;
  const on = cluster.settings.hashOn;
  const key = on === null ? undefined : requestKey(ctx, on).key;
  const endpoint = cluster.pick(key);
  if (endpoint !== undefined) {
    const session = (endpoint.h2 as UpstreamSession | null)?.open();
    if (session !== undefined) return new GrpcCall(ctx, upstream, endpoint, session, options, web).run();
  }
  return connectThenCall(ctx, upstream, options, web, key, endpoint);
}

/** Sends the call once a connection to an endpoint is made, tried again as the route says. */
async function connectThenCall(
  ctx: Context,
  upstream: RouteUpstream,
  options: ForwardOptions,
  web: GrpcWebCall | null,
  key: number | undefined,
  picked: Endpoint | undefined,
): Promise<void> {
  const cluster = upstream.cluster;
  const servername = servernameOf(upstream.address, cluster.settings.tls?.servername, options.hostRewrite);
  const report = (): void => options.events?.upstreamError?.(options.route ?? '', 'refused');
  const retry = upstream.retry;
  for (let tries = 0; ; tries++) {
    const endpoint: Endpoint =
      (tries === 0 ? picked : undefined) ?? cluster.pick(key) ?? (await cluster.resolvedPick(key, report));
    let session: ClientHttp2Session;
    try {
      session = sessionOf(endpoint, cluster.settings, servername).current();
      await connected(session);
    } catch (err) {
      cluster.outcome(endpoint, true);
      report();
      if (retry !== null && tries < retry.numRetries && retriesFailure(retry, 'connect') && !ctx.req.destroyed) {
        options.events?.upstreamRetry?.(options.route ?? '');
        await new Promise((resolve) => setTimeout(resolve, backoffMs(retry, tries + 1)));
        continue;
      }
      throw HttpError.of('UPSTREAM_UNAVAILABLE', { cause: err });
    }
    return new GrpcCall(ctx, upstream, endpoint, session, options, web).run();
  }
}
