/**
 * @module gateway/upstream/upgrade
 * Protocol upgrades (WebSocket) to a remote upstream, for a Mapping that
 * allows them (`allow_upgrade`). The request goes to the upstream on a
 * connection of its own, with its `Upgrade`; an upstream that agrees (101)
 * gets the client's connection joined to that one, byte for byte, until
 * either end closes; one that refuses is answered as any other response.
 * Auth, rate limits and header edits have run before, as for every routed
 * request; `timeout_ms` bounds the wait for the upstream's answer, as it
 * bounds the wait for response headers, and nothing bounds the tunnel after.
 */
import type { Context } from 'koa';
import http from 'node:http';
import https from 'node:https';
import { isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  hasOtherTransferCoding,
  headerName,
  isHopByHop,
  HttpError,
  upgradeHandover,
  upgradeProtocol,
  type UpgradeHandover,
} from '../../http';
import { connectOptions } from '../../tls';
import { copyResponseHeaders, upstreamRequestHeaders } from './headers';
import type { ForwardOptions } from './types';
import { failureOf, upstreamFailure } from './failures';
import type { RouteUpstream } from '.';

/**
 * The connection of a request that asks to upgrade to one of `allowed`, when
 * the server handed it over for that; undefined otherwise (the request is
 * then forwarded as plain HTTP, its `Upgrade` dropped as hop-by-hop).
 */
export function tunnelledUpgrade(ctx: Context, allowed: ReadonlySet<string>): UpgradeHandover | undefined {
  const handover = upgradeHandover(ctx.req);
  return handover !== undefined && allowed.has(upgradeProtocol(ctx.req)) ? handover : undefined;
}

/** How one upgrade is forwarded: as any request, and what to do to the 101 before it is sent. */
export interface UpgradeForwardOptions extends ForwardOptions {
  /** Called once the upstream agreed, before the 101 goes to the client: the route's response edits. */
  beforeSwitch(): void;
}

/** Joins two connections both ways; either closing or failing closes the other. */
function join(client: Duplex, upstream: Socket, clientHead: Buffer, upstreamHead: Buffer): void {
  upstream.setNoDelay(true);
  if (upstreamHead.length > 0) client.write(upstreamHead);
  if (clientHead.length > 0) upstream.write(clientHead);
  const close = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close);
  upstream.on('error', close);
  client.on('close', close);
  upstream.on('close', close);
  client.pipe(upstream);
  upstream.pipe(client);
}

/**
 * The 101's headers the client is sent: the upstream's, but those of its
 * connection to the gateway. Node's parser refused any header it would not
 * write (the request then failed with a 502), so setting them cannot throw.
 */
function copySwitchHeaders(res: http.ServerResponse, headers: http.IncomingHttpHeaders): void {
  for (const name in headers) {
    if (isHopByHop(name) && name !== 'connection' && name !== 'upgrade') continue;
    const value = headers[name];
    if (value !== undefined) res.setHeader(headerName(name), value);
  }
  // Whatever else the upstream's Connection said was about its own connection.
  res.setHeader('Connection', 'Upgrade');
}

/**
 * Forwards an upgrade request to an endpoint of the route's cluster, picked
 * as any request's (the tunnel is neither retried nor counted against the
 * breakers). Resolves once the client has its answer: the 101 and a tunnel,
 * or the upstream's refusal as a response (or the client is gone). Rejects
 * with an {@link HttpError} (502, 503, 504) when the upstream gave no answer.
 */
export async function forwardUpgrade(
  ctx: Context,
  upstream: RouteUpstream,
  handover: UpgradeHandover,
  options: UpgradeForwardOptions,
): Promise<void> {
  const { address, cluster } = upstream;
  const endpoint = await cluster.resolvedPick(undefined, () =>
    options.events?.upstreamError?.(options.route ?? '', 'refused'),
  );
  const hostname = endpoint.address;
  const headers = upstreamRequestHeaders(ctx, address.host, options.removedHeaders ?? [], options.hostRewrite);
  headers.connection = 'Upgrade';
  headers.upgrade = ctx.req.headers.upgrade as string;
  const client = handover.socket;

  return new Promise<void>((resolve, reject) => {
    let timedOut = false;
    let settled = false;
    const request = (address.secure ? https : http).request({
      host: hostname,
      port: endpoint.port,
      method: ctx.method,
      path: options.path,
      headers,
      // The connection becomes the tunnel's: none of a pool's is given up to it.
      agent: false,
      ...(address.secure && isIP(address.hostname) === 0 ? { servername: address.hostname } : {}),
      // A TLSContext's client certificate, authorities and SNI, as the cluster's pools connect with them.
      ...(address.secure && cluster.settings.tls !== undefined
        ? {
            ...connectOptions(cluster.settings.tls),
            ...(cluster.settings.tls.servername !== undefined ? { servername: cluster.settings.tls.servername } : {}),
          }
        : {}),
    });
    // `timeout_ms` bounds the wait for the answer; with 0, only connecting is bounded.
    const limit = options.timeoutMs > 0 ? options.timeoutMs : cluster.settings.connectTimeoutMs;
    const timer = setTimeout(() => {
      timedOut = true;
      request.destroy();
    }, limit);
    if (options.timeoutMs === 0) request.once('socket', (socket) => socket.once('connect', () => clearTimeout(timer)));
    const clientLeft = (): void => {
      request.destroy();
      settle();
    };
    client.once('close', clientLeft);
    function settle(err?: Error): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.off('close', clientLeft);
      if (err === undefined) resolve();
      else reject(err);
    }

    request.on('error', (err) => {
      if (settled) return;
      // A client that left is no failure of the upstream's.
      if (client.destroyed && !timedOut) return settle();
      const failure = timedOut ? 'timeout' : failureOf(err);
      options.events?.upstreamError?.(options.route ?? '', failure);
      settle(upstreamFailure(failure, err, options.timeoutMs));
    });
    /** An answer the gateway cannot pass on: a 502 with the error body, as on any route. */
    const broken = (error: 'UPSTREAM_FAILED' | 'UPSTREAM_TRANSFER_CODING'): void => {
      request.destroy();
      options.events?.upstreamError?.(options.route ?? '', 'other');
      settle(HttpError.of(error));
    };
    // undici, on every other route, takes an unasked-for 100 for a broken answer: so does this one.
    request.on('continue', () => broken('UPSTREAM_FAILED'));
    // A refusal (400, 401, 426...): the client reads it as the answer to its request.
    request.on('response', (res) => {
      if (settled) return;
      if (hasOtherTransferCoding(res.headers['transfer-encoding'])) {
        res.destroy();
        return broken('UPSTREAM_TRANSFER_CODING');
      }
      ctx.status = res.statusCode ?? 502;
      copyResponseHeaders(ctx, res.headers);
      const typed = res.headers['content-type'] !== undefined;
      ctx.body = res;
      if (!typed) ctx.remove('Content-Type');
      settle();
    });
    request.on('upgrade', (res, socket: Socket, head: Buffer) => {
      if (settled || client.destroyed) {
        socket.destroy();
        return settle();
      }
      const out = ctx.res;
      copySwitchHeaders(out, res.headers);
      options.beforeSwitch();
      // The connection is the tunnel's from now on: Koa writes nothing more to it.
      ctx.respond = false;
      out.writeHead(101);
      out.flushHeaders();
      join(client, socket, handover.head, head);
      settle();
    });
    request.end();
  });
}
