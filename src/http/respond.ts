/**
 * @module http/respond
 * What Koa does with a request once its context is made, as Koa 3 does it
 * (`Application#handleRequest` and the `respond` it ends with), without the
 * on-finished listener Koa attaches to every response. That listener (an
 * async resource, and four event listeners on the socket and the response,
 * made and dropped for every request: a tenth of a routed request's CPU)
 * reports only a socket that failed under the response, which nobody can
 * be answered on any more. A body that is a stream keeps its own: Koa's
 * `ctx.body` setter attaches it, and the stream is piped by `pipeline`,
 * unless it writes itself (see {@link WRITE_TO}).
 */
import type Koa from 'koa';
import type { Context } from 'koa';
import type { ServerResponse } from 'node:http';
import { pipeline, Readable } from 'node:stream';
import { bodyExplicitlyNull, handleRequestsWith, isKoaStream } from '../platform';
import { HttpError } from '../errors';

/** Who cut a response short when its client did not: its upstream, or the server's shutdown grace running out. */
export type CutShortBy = 'upstream' | 'shutdown';

const CUT_SHORT_BY: unique symbol = Symbol('cut short by');
type MarkedResponse = ServerResponse & { [CUT_SHORT_BY]?: CutShortBy };

/** Marks `res` as cut short by `by`, for the access log to say so rather than that its client left; the first mark stands. */
export function markCutShort(res: ServerResponse, by: CutShortBy): void {
  (res as MarkedResponse)[CUT_SHORT_BY] ??= by;
}

/** Who cut `res` short, when it was marked (see {@link markCutShort}). */
export function cutShortBy(res: ServerResponse): CutShortBy | undefined {
  return (res as MarkedResponse)[CUT_SHORT_BY];
}

/**
 * The method of a streamed body that writes itself to the response (a
 * proxied gRPC answer, which reads its upstream's stream straight into the
 * response and ends it with trailers): called once the middleware is done
 * with the answer's headers, in place of the pipeline a stream is given.
 */
export const WRITE_TO: unique symbol = Symbol('write to');

/** A body that writes itself to the response (see {@link WRITE_TO}). */
export interface SelfWritingBody {
  [WRITE_TO](res: ServerResponse): void;
}

/** The statuses whose response has no body (`statuses.empty`, which Koa reads). */
const EMPTY_STATUSES = new Set([204, 205, 304]);

/** A body Koa writes by piping it, as a Node stream; null for any other. */
function streamOf(body: unknown): Readable | null {
  if (body instanceof Blob) return Readable.from(body.stream());
  if (body instanceof ReadableStream) return Readable.from(body);
  if (body instanceof Response) return Readable.from(body.body ?? '');
  return isKoaStream(body) ? (body as Readable) : null;
}

/** Writes the response the middleware left in `ctx`, as Koa's `respond` does. */
function respond(ctx: Context): void {
  if (ctx.respond === false) return;
  const res = ctx.res;
  const response = ctx.response;
  if (!response.writable) {
    res.end();
    return;
  }
  let body: unknown = response.body;
  const code = response.status;
  if (EMPTY_STATUSES.has(code)) {
    // Its headers about a body go with it.
    response.body = null;
    res.end();
    return;
  }
  if (ctx.request.method === 'HEAD') {
    if (!res.headersSent && !res.hasHeader('Content-Length')) {
      const { length } = response;
      if (Number.isInteger(length)) response.length = length;
    }
    res.end();
    return;
  }
  if (body === null || body === undefined) {
    if (bodyExplicitlyNull(response)) {
      response.remove('Content-Type');
      response.remove('Transfer-Encoding');
      response.length = 0;
      res.end();
      return;
    }
    const text = ctx.req.httpVersionMajor >= 2 ? String(code) : response.message || String(code);
    if (!res.headersSent) {
      response.type = 'text';
      response.length = Buffer.byteLength(text);
    }
    res.end(text);
    return;
  }
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    res.end(body);
    return;
  }
  const writer = (body as Partial<SelfWritingBody>)[WRITE_TO];
  if (writer !== undefined) {
    writer.call(body, res);
    return;
  }
  const stream = streamOf(body);
  if (stream !== null) {
    // Headers go at once, as Envoy and nginx pass them on, when the body has
    // nothing to go with them yet (a proxied event stream's first event may
    // be seconds away); with it otherwise, in one write.
    if (stream.readableLength === 0 && !res.headersSent) res.flushHeaders();
    pipeline(stream, res, (err) => {
      // A client that left before the end is no error of the app's: the access log says it (aborted).
      if (err && err.code === 'ERR_STREAM_PREMATURE_CLOSE' && !res.writableFinished) return;
      // Nor one already told of: an HttpError (an upstream that cut its answer short) is counted where it was thrown.
      if (err instanceof HttpError) return;
      if (err && ctx.app.listenerCount('error')) ctx.onerror(err);
    });
    return;
  }
  body = JSON.stringify(body);
  if (!res.headersSent) response.length = Buffer.byteLength(body as string);
  res.end(body);
}

/**
 * Koa's `handleRequest`, less the on-finished listener: runs the middleware,
 * then writes the response; whatever either throws goes to `ctx.onerror`,
 * as in Koa. One async step, and no closure made for the request.
 */
async function handleRequest(ctx: Context, middleware: (ctx: Context) => Promise<unknown>): Promise<void> {
  ctx.res.statusCode = 404;
  try {
    await middleware(ctx);
    respond(ctx);
  } catch (err) {
    ctx.onerror(err as Error);
  }
}

/** Gives `app` the request handling above in place of Koa's own. */
export function respondWithoutFinishedListener(app: Koa): void {
  handleRequestsWith(app, handleRequest);
}
