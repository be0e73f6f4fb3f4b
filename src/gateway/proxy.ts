/**
 * @module gateway/proxy
 * Forwarding to a remote upstream with undici: one keep-alive pool per
 * upstream origin, bodies streamed both ways, hop-by-hop headers removed both
 * ways, `X-Forwarded-For/-Proto/-Host` set, and failures answered with the
 * error body: 504 past `timeout_ms`, 503 when the upstream cannot be reached,
 * 502 for anything else it does wrong.
 */
import type { Context } from 'koa';
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import { connectionNamed, hasOtherTransferCoding, headerName, HttpError } from '../http';
import { payloadTooLarge, type StreamedBodyGuard } from './body-limit';
import type { GatewayEvents, UpstreamFailure } from './events';
import { isHopByHop } from './hop-by-hop';
import { clientAddress, forwardedHeader } from './forwarded';
import type { UpstreamAddress } from './upstream';

function ignore(): void {}

/**
 * The abort signal of one forwarded request. undici takes an EventEmitter as a
 * signal; an AbortController costs an EventTarget and a DOMException per request.
 */
class Abort extends EventEmitter {
  aborted = false;
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

/**
 * Answers up to this size with a known length are read whole and sent as one
 * buffer: koa's stream pipeline costs more per request than the copy. Larger
 * or unsized answers stream.
 */
const BUFFERED_BODY_MAX = 64 * 1024;

/** Whether the answer has a body that is small enough, and its length said, to read whole. */
function smallBody(method: string, status: number, headers: IncomingHttpHeaders): boolean {
  if (method === 'HEAD' || status === 204 || status === 304) return false;
  const length = headers['content-length'];
  if (length === undefined) return false;
  const n = Number(length);
  return n > 0 && n <= BUFFERED_BODY_MAX;
}

/**
 * undici detaches the socket from a request body it is done with (so that
 * destroying the body cannot close the connection), but Koa reads the client
 * address and protocol from `req.socket`, and so may anything that runs after
 * the gateway (its access log, a host app): once the body is closed, the
 * socket goes back.
 */
function keepSocket(req: IncomingMessage): void {
  const socket = req.socket;
  req.once('close', () => {
    if (req.socket === null) req.socket = socket;
  });
}

/** A remote upstream and its connection pool. */
export interface Upstream {
  readonly address: UpstreamAddress;
  readonly pool: Pool;
}

export interface UpstreamOptions {
  /** How long to wait for a connection, in ms. */
  connectTimeout: number;
  /** Connections kept open to it at most. Default 128. */
  connections?: number;
}

/** Opens (lazily: undici connects on first use) a pool to an upstream. */
export function createUpstream(address: UpstreamAddress, options: UpstreamOptions): Upstream {
  const pool = new Pool(address.origin, {
    connections: options.connections ?? 128,
    connectTimeout: options.connectTimeout,
    keepAliveTimeout: 4_000,
  });
  return { address, pool };
}

const NONE: readonly string[] = [];

/**
 * The headers the upstream is sent. `X-Forwarded-*` and `Forwarded` are
 * written by the gateway, unless the route's `remove_request_headers` names
 * them: then they are not sent at all, as Envoy's router removes them after
 * its connection manager wrote them. `Host` is the upstream's own, or the
 * route's `host_rewrite`; the client's stays in `X-Forwarded-Host`.
 */
export function upstreamRequestHeaders(
  ctx: Context,
  upstream: Upstream,
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
  const protocol = ctx.protocol;
  if (!removed.includes('x-forwarded-proto')) out['x-forwarded-proto'] = protocol;
  const host = ctx.host;
  if (host && !removed.includes('x-forwarded-host')) out['x-forwarded-host'] = host;
  else delete out['x-forwarded-host'];
  // Not even the client's after remove_request_headers.
  if (removed.includes('forwarded')) delete out.forwarded;
  else out.forwarded = forwardedHeader(ctx, client, host, protocol);
  out.host = hostRewrite ?? upstream.address.host;
  return out;
}

export function copyResponseHeaders(ctx: Context, headers: IncomingHttpHeaders): void {
  const named = connectionNamed(headers.connection);
  for (const name in headers) {
    if (isHopByHop(name)) continue;
    if (named !== null && named.includes(name)) continue;
    const value = headers[name];
    if (value !== undefined) ctx.set(headerName(name), value);
  }
}

/** What kind of failure an error of undici's is. */
export function failureOf(err: unknown): UpstreamFailure {
  switch ((err as { code?: string } | null)?.code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'timeout';
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'refused';
    default:
      return 'other';
  }
}

/** The answer for an upstream that failed before sending its response headers. */
export function upstreamFailure(failure: UpstreamFailure, err: unknown, timeoutMs: number): HttpError {
  switch (failure) {
    case 'timeout':
      if (timeoutMs === 0) return new HttpError(504, 'the upstream service could not be connected to in time', { cause: err });
      return new HttpError(504, `the upstream service did not answer within ${timeoutMs} ms`, { cause: err });
    case 'refused':
      return new HttpError(503, 'the upstream service is unavailable', { cause: err });
    default:
      return new HttpError(502, 'the upstream service failed to answer', { cause: err });
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
}

/**
 * Sends the request to `upstream` and streams its answer back through `ctx`.
 * Throws an {@link HttpError} (413, 502, 503, 504) when there is no answer to
 * stream.
 */
export async function forwardRemote(ctx: Context, upstream: Upstream, options: ForwardOptions): Promise<void> {
  const req = ctx.req;
  const hasBody = options.guard !== null || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
  // One signal for both ends: the client leaving, and `timeout_ms` passing
  // before the response headers (undici's own timers tick by the second).
  const abort = new Abort();
  let timedOut = false;
  let answered = false;
  let timer: NodeJS.Timeout | undefined;
  // `timeout_ms: 0` waits as long as the upstream takes, as in Emissary.
  const expire =
    options.timeoutMs > 0
      ? (): void => {
          timedOut = true;
          abort.abort();
        }
      : null;
  // The time counts from the end of the request body, as Envoy's route
  // timeout does: an upload slower than `timeout_ms` is no fault of the
  // upstream's, which cannot answer before it has the body.
  const arm =
    expire !== null && hasBody && !req.readableEnded
      ? (): void => {
          if (!answered) timer = setTimeout(expire, options.timeoutMs);
        }
      : null;
  if (arm !== null) req.once('end', arm);
  else if (expire !== null) timer = setTimeout(expire, options.timeoutMs);
  const onClose = (): void => {
    if (!ctx.res.writableFinished) abort.abort();
  };
  ctx.res.once('close', onClose);
  if (hasBody) keepSocket(req);

  let response: Dispatcher.ResponseData;
  try {
    response = await upstream.pool.request({
      method: ctx.method as Dispatcher.HttpMethod,
      path: options.path,
      headers: upstreamRequestHeaders(ctx, upstream, options.removedHeaders ?? NONE, options.hostRewrite),
      body: hasBody ? req : null,
      // The timer above stands for undici's headers timeout, which would run from the start of the upload.
      headersTimeout: 0,
      bodyTimeout: options.timeoutMs,
      signal: abort,
    });
  } catch (err) {
    ctx.res.off('close', onClose);
    if (options.guard?.tripped) throw payloadTooLarge(options.guard.limit);
    const failure = timedOut ? 'timeout' : failureOf(err);
    // A client that left is no failure of the upstream's.
    if (timedOut || !abort.aborted) options.events?.upstreamError?.(options.route ?? '', failure);
    throw upstreamFailure(failure, err, options.timeoutMs);
  } finally {
    answered = true;
    clearTimeout(timer);
    if (arm !== null) req.off('end', arm);
  }

  const { statusCode, headers, body } = response;
  if (hasOtherTransferCoding(headers['transfer-encoding'] as string | undefined)) {
    // undici took the chunks off and left the other coding on: passed on
    // without its Transfer-Encoding, the body would be read as plain bytes.
    ctx.res.off('close', onClose);
    body.on('error', ignore).destroy();
    options.events?.upstreamError?.(options.route ?? '', 'other');
    throw new HttpError(502, 'the upstream service answered in a transfer coding other than chunked');
  }
  let payload: Buffer | Dispatcher.ResponseData['body'] = body;
  if (smallBody(ctx.method, statusCode, headers)) {
    try {
      payload = Buffer.from(await body.arrayBuffer());
    } catch (err) {
      ctx.res.off('close', onClose);
      // Nothing is sent yet: a body cut short or too slow is still answered with the error body.
      if (abort.aborted && !timedOut) throw err;
      const failure = failureOf(err);
      options.events?.upstreamError?.(options.route ?? '', failure);
      throw upstreamFailure(failure, err, options.timeoutMs);
    }
    ctx.res.off('close', onClose);
  } else {
    // koa destroys an unread body (HEAD, 204, 304) once the response is sent; that is no error.
    body.on('error', ignore);
  }
  ctx.status = statusCode;
  copyResponseHeaders(ctx, headers);
  const typed = headers['content-type'] !== undefined;
  ctx.body = payload;
  // koa names a stream `application/octet-stream` when nothing else did; the upstream's word stands.
  if (!typed) ctx.remove('Content-Type');
}
