/**
 * @module gateway/upstream/grpc/call
 * One gRPC call proxied on an HTTP/2 stream to its upstream: the client's
 * messages written up as they come, the upstream's written down (./answer),
 * each side held by the other's flow control and nothing buffered whole,
 * its headers and trailers passed on, cancellation passed either way, and
 * its deadline kept. Its listeners find the call on the objects they
 * listen to: no closure is made for a call.
 *
 * The deadline is the earlier of the client's `grpc-timeout`, from the
 * start of the call, and the Mapping's `timeout_ms`, from the end of the
 * client's messages, as Envoy counts its route timeout. Before the
 * upstream's headers, a deadline that passes, or an upstream that resets
 * the stream, is answered by the gateway (504, 503: DEADLINE_EXCEEDED,
 * UNAVAILABLE once rendered for gRPC); after them, the call ends with that
 * status in its trailers, and the upstream's stream is cancelled.
 *
 * A gRPC-Web call (./web) goes up as gRPC, its text body decoded, and comes
 * back with its trailers in the body's trailer frame, after the messages.
 */
import type { Context } from 'koa';
import type { ServerResponse } from 'node:http';
import { constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import type { Readable } from 'node:stream';
import { bodyFailure, encodeGrpcMessage, GrpcStatus, HttpError } from '../../../http';
import { setSelfWatchingBody } from '../../../platform';
import type { Endpoint } from '../endpoints/endpoint';
import type { RouteUpstream } from '../endpoints/clusters';
import type { ForwardOptions } from '../types';
import { GrpcAnswer, type AnswerOwner, type Trailers } from './answer';
import { grpcRequestHeaders } from './headers';
import { grpcTimeoutMs } from './deadline';
import { answerHeadersCame } from './response-headers';
import type { GrpcWebCall } from './web';
import { GrpcWebTextDecoder } from './web-text';

const { NGHTTP2_CANCEL, NGHTTP2_FLAG_END_STREAM } = constants;

const CALL = Symbol('gRPC call');
type Carrying<T> = T & { [CALL]?: GrpcCall };

function ignore(): void {}

// The listeners of a call, on its upstream's stream, its client's request and its response.
function onResponse(this: Carrying<ClientHttp2Stream>, headers: IncomingHttpHeaders, flags: number): void {
  this[CALL]!.responseCame(headers, flags);
}
function onTrailers(this: Carrying<ClientHttp2Stream>, trailers: IncomingHttpHeaders): void {
  this[CALL]!.trailersCame(trailers);
}
function onUpstreamClose(this: Carrying<ClientHttp2Stream>): void {
  this[CALL]!.upstreamClosed();
}
function onUpstreamDrain(this: Carrying<ClientHttp2Stream>): void {
  this[CALL]!.source.resume();
}
function onMessages(this: Carrying<Readable>, chunk: Buffer): void {
  this[CALL]!.send(chunk);
}
function onMessagesEnd(this: Carrying<Readable>): void {
  this[CALL]!.sent();
}
function onRequestError(this: Carrying<Readable>, err: Error): void {
  this[CALL]!.requestFailed(err);
}
function onClientClose(this: Carrying<ServerResponse>): void {
  this[CALL]!.clientClosed();
}
function expire(call: GrpcCall, ms: number): void {
  call.expire(ms);
}

const NO_BODY = Buffer.alloc(0);

/** A gRPC call under way to one endpoint. */
export class GrpcCall implements AnswerOwner {
  private readonly stream: Carrying<ClientHttp2Stream>;
  /** The client's messages: its request's body, or, for a gRPC-Web text call, its decoding. */
  readonly source: Carrying<Readable>;
  private answer: GrpcAnswer | null = null;
  private deadline: NodeJS.Timeout | undefined;
  private routeTimer: NodeJS.Timeout | undefined;
  /** The upstream's stream has been told to wait for a drain before more messages are written. */
  private drainWatched = false;
  /** The upstream's headers came. */
  private responded = false;
  /** The call's status came from the upstream (trailers, or trailers-only headers). */
  private statusCame = false;
  /** The call ended on the gateway's side: deadline, client gone, broken request. */
  private ended = false;
  private resolve!: () => void;
  private reject!: (err: unknown) => void;

  constructor(
    private readonly ctx: Context,
    private readonly upstream: RouteUpstream,
    private readonly endpoint: Endpoint,
    session: ClientHttp2Session,
    private readonly options: ForwardOptions,
    private readonly web: GrpcWebCall | null,
  ) {
    const headers = grpcRequestHeaders(ctx, upstream, options, web !== null);
    this.source = web?.textRequest === true ? ctx.req.pipe(new GrpcWebTextDecoder()) : ctx.req;
    // The upstream's spans join the request's trace, under the gateway's span.
    if (options.trace != null) options.trace.inject(headers as Record<string, string>);
    this.stream = session.request(headers, { endStream: false });
  }

  /** Sends the call; resolves once the upstream's headers are on `ctx`, rejects with the gateway's answer before them. */
  run(): Promise<void> {
    const { ctx, stream, source } = this;
    const req = ctx.req as Carrying<Context['req']>;
    const res = ctx.res as Carrying<ServerResponse>;
    const settled = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    stream[CALL] = this;
    stream.on('error', ignore);
    stream.on('response', onResponse);
    stream.on('trailers', onTrailers);
    stream.on('close', onUpstreamClose);
    res[CALL] = this;
    res.on('close', onClientClose);
    req[CALL] = this;
    req.on('error', onRequestError);
    source[CALL] = this;
    if (source !== req) source.on('error', onRequestError);
    const clientMs = grpcTimeoutMs(req.headers['grpc-timeout']);
    if (clientMs !== undefined) this.deadline = setTimeout(expire, clientMs, this, clientMs);
    if (source.readableEnded) this.sent();
    else {
      source.on('data', onMessages);
      source.on('end', onMessagesEnd);
      // Flowing, even where a reader before paused it.
      source.resume();
    }
    return settled;
  }

  /** Writes a chunk of the client's messages up, holding the client while the upstream's window is full. */
  send(chunk: Buffer): void {
    const stream = this.stream;
    if (stream.destroyed) return;
    if (stream.write(chunk)) return;
    this.source.pause();
    if (this.drainWatched) return;
    this.drainWatched = true;
    stream.on('drain', onUpstreamDrain);
  }

  /** The client's messages are all sent: the upstream is told, and the route's timeout counts from now. */
  sent(): void {
    if (this.stream.destroyed) return;
    this.stream.end();
    const routeMs = this.options.timeoutMs;
    if (routeMs > 0 && !this.ended && !this.statusCame) this.routeTimer = setTimeout(expire, routeMs, this, routeMs);
  }

  responseCame(headers: IncomingHttpHeaders, flags: number): void {
    if (this.ended) return;
    this.responded = true;
    const ctx = this.ctx;
    const status = Number(headers[':status']);
    this.upstream.cluster.outcome(this.endpoint, status >= 500);
    answerHeadersCame(ctx, status, headers, this.web);
    if ((flags & NGHTTP2_FLAG_END_STREAM) !== 0) {
      // Trailers-only: the status is in these headers, sent as they are, in one frame that ends the stream.
      this.statusCame = true;
      this.clearTimers();
      ctx.body = NO_BODY;
      ctx.res.removeHeader('content-length');
    } else {
      // Written on as it comes once the middleware is done with the headers (see ./answer). Koa's setter would tie
      // it to the response's end; the call watches its response itself.
      this.answer = new GrpcAnswer(this.stream, this.web, this);
      setSelfWatchingBody(ctx.response, this.answer);
    }
    // The type Koa gives a body that has none is not the upstream's.
    if (headers['content-type'] === undefined && this.web === null) ctx.res.removeHeader('content-type');
    this.resolve();
  }

  trailersCame(trailers: IncomingHttpHeaders): void {
    this.statusCame = true;
    this.clearTimers();
    if (this.ended) return;
    const passed: Trailers = {};
    for (const name in trailers) {
      const value = trailers[name];
      if (name.charCodeAt(0) !== 58 && value !== undefined) passed[name] = value;
    }
    if (this.web === null) this.ctx.res.addTrailers(passed);
    this.answer?.statusCame(this.web === null ? null : passed);
  }

  /** The upstream's stream closed: without a status, the call failed upstream. */
  upstreamClosed(): void {
    this.clearTimers();
    this.stopSending();
    // An answer whose status came ends with it, whether or not its last message was read.
    if (this.statusCame && !this.ended) this.answer?.end();
    if (this.ended || this.statusCame) return;
    this.options.events?.upstreamError?.(this.options.route ?? '', 'other');
    this.upstream.cluster.outcome(this.endpoint, true);
    const why = `the upstream reset the stream (HTTP/2 error ${this.stream.rstCode})`;
    if (!this.responded) {
      this.ended = true;
      this.reject(HttpError.of('UPSTREAM_UNAVAILABLE', { cause: new Error(why) }));
      return;
    }
    this.endWith(GrpcStatus.UNAVAILABLE, why);
  }

  /** The client left (or reset its stream): the upstream's stream is cancelled. */
  clientClosed(): void {
    // A call the upstream ended already has nothing left to cancel (and its answer may still be on its way).
    if (this.stream.closed) return;
    this.ended = true;
    this.clearTimers();
    this.stream.close(NGHTTP2_CANCEL);
    if (!this.responded) this.reject(HttpError.of('CLIENT_LEFT'));
  }

  /** The answer was replaced, or its response ended without it: the upstream's stream is cancelled. */
  abandoned(): void {
    this.ended = true;
    this.clearTimers();
    if (!this.stream.closed) this.stream.close(NGHTTP2_CANCEL);
  }

  /** The client's messages broke off (too long, reset): the upstream's stream is cancelled. */
  requestFailed(err: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.clearTimers();
    if (!this.stream.closed) this.stream.close(NGHTTP2_CANCEL);
    if (!this.responded) this.reject(bodyFailure(this.ctx.req) ?? err);
    else this.answer?.end();
  }

  /** The deadline passed: the upstream's stream is cancelled and the client told DEADLINE_EXCEEDED. */
  expire(ms: number): void {
    if (this.ended || this.statusCame) return;
    this.options.events?.upstreamError?.(this.options.route ?? '', 'timeout');
    if (!this.responded) {
      this.ended = true;
      this.clearTimers();
      if (!this.stream.closed) this.stream.close(NGHTTP2_CANCEL);
      this.reject(HttpError.of('UPSTREAM_TIMEOUT', { timeoutMs: ms }));
      return;
    }
    this.endWith(GrpcStatus.DEADLINE_EXCEEDED, `the upstream service did not answer within ${ms} ms`);
  }

  /** Ends an answer under way with the gateway's own status in its trailers. */
  private endWith(code: number, message: string): void {
    this.ended = true;
    this.clearTimers();
    const trailers = { 'grpc-status': String(code), 'grpc-message': encodeGrpcMessage(message) };
    if (!this.stream.closed) this.stream.close(NGHTTP2_CANCEL);
    if (this.web === null) {
      this.ctx.res.addTrailers(trailers);
      this.answer?.end();
    } else this.answer?.end(trailers);
  }

  /** No more of the client's messages go up: the upstream's stream is gone. */
  private stopSending(): void {
    const source = this.source;
    if (source.readableEnded) return;
    source.off('data', onMessages);
    source.pause();
  }

  private clearTimers(): void {
    if (this.deadline !== undefined) clearTimeout(this.deadline);
    if (this.routeTimer !== undefined) clearTimeout(this.routeTimer);
  }
}
