/**
 * @module gateway/upstream/grpc/call
 * One gRPC call proxied on an HTTP/2 stream to its upstream: the client's
 * messages piped up, the upstream's piped down (each side held by the
 * other's flow control, nothing buffered whole), its headers and trailers
 * passed on, cancellation passed either way, and its deadline kept.
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
import { constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import { PassThrough, type Readable } from 'node:stream';
import { bodyFailure, encodeGrpcMessage, GrpcStatus, HttpError, isHopByHop } from '../../../http';
import type { Endpoint } from '../endpoints/endpoint';
import type { RouteUpstream } from '../endpoints/clusters';
import type { ForwardOptions } from '../types';
import { grpcRequestHeaders } from './headers';
import { grpcTimeoutMs } from './deadline';
import { GrpcWebAnswerBody, grpcWebAnswerType, trailerFrame, type GrpcWebCall } from './web';
import { GrpcWebTextDecoder } from './web-text';

const { NGHTTP2_CANCEL, NGHTTP2_FLAG_END_STREAM } = constants;

/** Marks a response that carries an upstream's gRPC answer: the gateway renders no status of its own over it. */
export const PROXIED_GRPC = Symbol('proxied gRPC answer');

function ignore(): void {}

const NO_BODY = Buffer.alloc(0);

/** A gRPC call under way to one endpoint. */
export class GrpcCall {
  private readonly stream: ClientHttp2Stream;
  /** What is piped up: the client's body, or, for a gRPC-Web text call, its decoding. */
  private source: Readable;
  private body: PassThrough | GrpcWebAnswerBody | null = null;
  /** A gRPC-Web call's trailers, kept for its trailer frame. */
  private webTrailers: Record<string, string | string[]> | null = null;
  private deadline: NodeJS.Timeout | undefined;
  private routeTimer: NodeJS.Timeout | undefined;
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
    const { ctx, stream } = this;
    const req = ctx.req;
    const settled = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    stream.on('error', ignore);
    stream.once('response', (headers, flags) => this.responseCame(headers, flags));
    stream.once('trailers', (trailers: IncomingHttpHeaders) => this.trailersCame(trailers));
    stream.once('close', () => this.upstreamClosed());
    ctx.res.once('close', this.clientClosed);
    req.once('error', this.requestFailed);
    if (this.source !== req) this.source.once('error', this.requestFailed);
    const clientMs = grpcTimeoutMs(req.headers['grpc-timeout']);
    if (clientMs !== undefined) this.deadline = setTimeout(() => this.expire(clientMs), clientMs);
    const routeMs = this.options.timeoutMs;
    if (routeMs > 0) {
      const arm = (): void => {
        if (!this.ended && !this.statusCame) this.routeTimer = setTimeout(() => this.expire(routeMs), routeMs);
      };
      if (req.readableEnded) arm();
      else req.once('end', arm);
    }
    this.source.pipe(stream);
    return settled;
  }

  private responseCame(headers: IncomingHttpHeaders, flags: number): void {
    if (this.ended) return;
    this.responded = true;
    const { ctx, stream } = this;
    const status = Number(headers[':status']);
    this.upstream.cluster.outcome(this.endpoint, status >= 500);
    const res = ctx.res;
    (res as unknown as Record<symbol, boolean>)[PROXIED_GRPC] = true;
    ctx.status = status;
    for (const name in headers) {
      if (name.charCodeAt(0) === 58 || isHopByHop(name)) continue;
      const value = headers[name];
      if (value !== undefined) res.setHeader(name, value);
    }
    const web = this.web;
    if (web !== null) {
      res.setHeader('content-type', grpcWebAnswerType(web));
      res.removeHeader('content-length');
    }
    if ((flags & NGHTTP2_FLAG_END_STREAM) !== 0) {
      // Trailers-only: the status is in these headers, sent as they are, in one frame that ends the stream.
      this.statusCame = true;
      this.clearTimers();
      ctx.body = NO_BODY;
      res.removeHeader('content-length');
    } else {
      // Piped on as it comes; the headers go at once (see http/respond): a client may wait for them before it writes.
      const body = (this.body = web === null ? new PassThrough() : new GrpcWebAnswerBody(web.textAnswer));
      // gRPC-Web: the trailer frame follows the last message, once all of them are through.
      stream.pipe(body, { end: web === null });
      if (web !== null) stream.once('end', () => this.statusCame && this.finishWeb());
      ctx.body = body;
    }
    if (headers['content-type'] === undefined && web === null) ctx.remove('Content-Type');
    this.resolve();
  }

  private trailersCame(trailers: IncomingHttpHeaders): void {
    this.statusCame = true;
    this.clearTimers();
    if (this.ended) return;
    const passed: Record<string, string | string[]> = {};
    for (const name in trailers) {
      const value = trailers[name];
      if (name.charCodeAt(0) !== 58 && value !== undefined) passed[name] = value;
    }
    if (this.web !== null) this.webTrailers = passed;
    else this.ctx.res.addTrailers(passed);
  }

  /** The upstream's stream closed: without a status, the call failed upstream. */
  private upstreamClosed(): void {
    this.clearTimers();
    this.ctx.res.off('close', this.clientClosed);
    this.ctx.req.off('error', this.requestFailed);
    this.source.unpipe(this.stream);
    // A gRPC-Web answer whose status came ends with it, whether or not its last message was read.
    if (this.statusCame && !this.ended && this.web !== null) this.finishWeb();
    if (this.ended || this.statusCame) return;
    this.options.events?.upstreamError?.(this.options.route ?? '', 'other');
    this.upstream.cluster.outcome(this.endpoint, true);
    if (!this.responded) {
      this.ended = true;
      const err = HttpError.of('UPSTREAM_UNAVAILABLE', {
        cause: new Error(`the upstream reset the stream (HTTP/2 error ${this.stream.rstCode})`),
      });
      this.reject(err);
      return;
    }
    this.endWith(GrpcStatus.UNAVAILABLE, `the upstream reset the stream (HTTP/2 error ${this.stream.rstCode})`);
  }

  /** The client left (or reset its stream): the upstream's stream is cancelled. */
  private readonly clientClosed = (): void => {
    // A call the upstream ended already has nothing left to cancel (and its answer may still be on its way).
    if (this.stream.closed) return;
    this.ended = true;
    this.clearTimers();
    this.stream.close(NGHTTP2_CANCEL);
    if (!this.responded) this.reject(HttpError.of('CLIENT_LEFT'));
  };

  /** The client's messages broke off (too long, reset): the upstream's stream is cancelled. */
  private readonly requestFailed = (err: Error): void => {
    if (this.ended) return;
    this.ended = true;
    this.clearTimers();
    if (!this.stream.closed) this.stream.close(NGHTTP2_CANCEL);
    if (!this.responded) this.reject(bodyFailure(this.ctx.req) ?? err);
    else this.finishBody();
  };

  /** The deadline passed: the upstream's stream is cancelled and the client told DEADLINE_EXCEEDED. */
  private expire(ms: number): void {
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
    if (this.web !== null) {
      this.webTrailers = trailers;
      this.finishWeb();
      return;
    }
    this.ctx.res.addTrailers(trailers);
    this.finishBody();
  }

  /** Ends a gRPC-Web answer with its trailer frame. */
  private finishWeb(): void {
    const body = this.body;
    if (body === null || body.writableEnded) return;
    this.stream.unpipe(body);
    body.end(trailerFrame(this.webTrailers ?? {}));
  }

  private finishBody(): void {
    const body = this.body;
    if (body === null) return;
    this.stream.unpipe(body);
    if (!body.writableEnded) body.end();
  }

  private clearTimers(): void {
    clearTimeout(this.deadline);
    clearTimeout(this.routeTimer);
  }
}
