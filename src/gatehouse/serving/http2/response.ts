/**
 * @module gatehouse/serving/http2/response
 * The answer to an HTTP/2 request as the app writes an HTTP/1.1 one: Node's
 * ServerResponse surface over an HTTP/2 stream, at less cost than Node's
 * compatibility layer. Headers that only make sense on one HTTP/1.1
 * connection (`Connection` and those it names, `Keep-Alive`,
 * `Transfer-Encoding`, `Upgrade`, `Proxy-Connection`) are dropped as they
 * are set, as RFC 9113 §8.2.2 requires of an intermediary (./header-fields); trailers are sent
 * to a client that said it takes them (`TE: trailers`), and only then is
 * an answer's end held for them.
 */
import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';
import type { ServerHttp2Stream, ServerStreamResponseOptions } from 'node:http2';
import type { Socket } from 'node:net';
import { Stream } from 'node:stream';
import {
  checkHeader,
  CONNECTION_SPECIFIC,
  headersSentError,
  lowerCase,
  SINGLE_VALUE,
  type HeaderValue,
} from './header-fields';
import type { Http2Request } from './request';

/** Where a stream keeps its response. */
export const RESPONSE = Symbol('response');
type ResponseStream = ServerHttp2Stream & { [RESPONSE]?: Http2Response };
/** Node's stream knows whether its request is a HEAD, whose answer has no body. */
type AnsweringStream = ServerHttp2Stream & { headRequest?: boolean };

function onStreamFinish(this: ResponseStream): void {
  this[RESPONSE]?.finish();
}

function onStreamDrain(this: ResponseStream): void {
  this[RESPONSE]?.emit('drain');
}

function onWantTrailers(this: ResponseStream): void {
  const res = this[RESPONSE];
  this.sendTrailers(res?.trailers ?? {});
}

/** The response to an {@link Http2Request}. */
export class Http2Response extends Stream {
  statusCode = 200;
  /** Whether a `Date` header is added. */
  sendDate = true;
  /** Read by code written for HTTP/1.1; a stream closes on its own, and a connection closes by GOAWAY. */
  shouldKeepAlive = true;
  readonly writable = true;
  readonly req: Http2Request;
  readonly stream: AnsweringStream;
  /** Trailers to send after the body, for a client that takes them. */
  trailers: Record<string, string | string[]> | undefined;
  /** The headers set, by lower-case name. */
  private headers: OutgoingHttpHeaders = Object.create(null) as OutgoingHttpHeaders;
  private ending = false;
  private closed = false;
  private finishEmitted = false;

  constructor(stream: ServerHttp2Stream, req: Http2Request) {
    super();
    this.stream = stream;
    this.req = req;
    (stream as ResponseStream)[RESPONSE] = this;
  }

  get headersSent(): boolean {
    return this.stream.headersSent;
  }

  get writableEnded(): boolean {
    return this.ending;
  }

  get finished(): boolean {
    return this.ending;
  }

  get writableFinished(): boolean {
    return this.stream.writableFinished;
  }

  get destroyed(): boolean {
    return this.stream.destroyed;
  }

  /** The connection's socket while the stream is open, as Node's response lets go of its socket once done. */
  get socket(): Socket | null {
    return this.closed ? null : this.req.socket;
  }

  get connection(): Socket | null {
    return this.socket;
  }

  setHeader(name: string, value: HeaderValue): this {
    if (this.stream.headersSent) throw headersSentError();
    checkHeader(name, value);
    const key = lowerCase(name);
    if (CONNECTION_SPECIFIC.has(key)) return this;
    const first = Array.isArray(value) && value.length > 1 && SINGLE_VALUE.has(key) ? (value[0] as string) : undefined;
    this.headers[key] = first ?? (value as OutgoingHttpHeader);
    return this;
  }

  appendHeader(name: string, value: string | readonly string[]): this {
    const prior = this.getHeader(name);
    if (prior === undefined) return this.setHeader(name, value);
    const values = (Array.isArray(prior) ? prior : [String(prior)]).concat(value);
    return this.setHeader(name, values);
  }

  getHeader(name: string): OutgoingHttpHeader | undefined {
    return this.headers[lowerCase(name)];
  }

  hasHeader(name: string): boolean {
    return this.headers[lowerCase(name)] !== undefined;
  }

  removeHeader(name: string): void {
    if (this.stream.headersSent) throw headersSentError();
    const key = lowerCase(name);
    if (key === 'date') this.sendDate = false;
    delete this.headers[key];
  }

  getHeaders(): OutgoingHttpHeaders {
    return Object.assign(Object.create(null) as OutgoingHttpHeaders, this.headers);
  }

  getHeaderNames(): string[] {
    return Object.keys(this.headers);
  }

  /** The names as set: over HTTP/2 every name is lower case. */
  getRawHeaderNames(): string[] {
    return Object.keys(this.headers);
  }

  writeHead(
    statusCode: number,
    reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    if (this.closed || this.stream.destroyed) return this;
    if (this.stream.headersSent) throw headersSentError();
    const given = typeof reason === 'string' ? headers : (headers ?? reason);
    if (Array.isArray(given)) {
      for (let i = 0; i < given.length; i += 2) this.removeHeader(String(given[i]));
      for (let i = 0; i < given.length; i += 2) this.appendHeader(String(given[i]), given[i + 1] as string);
    } else if (given) {
      for (const name of Object.keys(given)) this.setHeader(name, given[name] as HeaderValue);
    }
    this.statusCode = statusCode;
    this.respond();
    return this;
  }

  flushHeaders(): void {
    if (!this.closed && !this.stream.headersSent) this.respond();
  }

  private respond(endStream = false): void {
    const headers = this.headers;
    headers[':status'] = this.statusCode;
    const stream = this.stream;
    // A client that takes trailers may be sent some: the end waits for them (an empty frame when there are none).
    // An answer that ends with its headers and has none is one frame: a gRPC trailers-only answer must be.
    const trailers = this.req.headers.te === 'trailers' && !(endStream && this.trailers === undefined);
    if (trailers) stream.on('wantTrailers', onWantTrailers);
    const options: ServerStreamResponseOptions & { sendDate: boolean } = {
      endStream: endStream && !trailers,
      waitForTrailers: trailers,
      sendDate: this.sendDate,
    };
    stream.respond(headers, options);
    delete headers[':status'];
  }

  write(
    chunk: string | Uint8Array,
    encoding?: BufferEncoding | ((err?: Error | null) => void),
    cb?: (err?: Error | null) => void,
  ): boolean {
    if (this.ending || this.closed) return false;
    const stream = this.stream;
    if (!stream.headersSent) this.respond();
    // A HEAD's answer, and a 204's or a 304's, ended with its headers.
    if (stream.writableEnded) return true;
    const done = typeof encoding === 'function' ? encoding : cb;
    const written = typeof encoding === 'string' ? stream.write(chunk, encoding, done) : stream.write(chunk, done);
    if (!written && stream.listenerCount('drain') === 0) stream.on('drain', onStreamDrain);
    return written;
  }

  end(chunk?: string | Uint8Array | (() => void), encoding?: BufferEncoding | (() => void), cb?: () => void): this {
    const done = typeof chunk === 'function' ? chunk : typeof encoding === 'function' ? encoding : cb;
    const data = typeof chunk === 'function' ? undefined : chunk;
    if (this.ending || this.closed) {
      if (done) process.nextTick(done);
      return this;
    }
    const stream = this.stream;
    if (stream.destroyed) {
      this.ending = true;
      if (done) process.nextTick(done);
      return this;
    }
    if (done) this.once('finish', done);
    // Told as the stream finishes to whoever waits for it already; otherwise as the stream closes (see streamClosed).
    if (this.listenerCount('finish') > 0) stream.on('finish', onStreamFinish);
    const body = data !== undefined && data !== null && data.length > 0 && !stream.headRequest;
    this.ending = true;
    if (!stream.headersSent) this.respond(!body);
    if (stream.writableEnded) return this;
    if (body && typeof encoding === 'string') stream.end(data, encoding);
    else if (body) stream.end(data);
    else stream.end();
    return this;
  }

  destroy(err?: Error): void {
    this.stream.destroy(err);
  }

  setTimeout(ms: number, callback?: () => void): this {
    if (!this.stream.destroyed) this.stream.setTimeout(ms, callback);
    return this;
  }

  writeContinue(): void {
    if (!this.stream.headersSent && !this.closed) this.stream.additionalHeaders({ ':status': 100 });
  }

  cork(): void {
    this.stream.cork();
  }

  uncork(): void {
    this.stream.uncork();
  }

  /** Sets trailers to send after the body, for a client that takes them; others get none. */
  addTrailers(trailers: Record<string, string | string[]>): void {
    this.trailers = { ...this.trailers, ...trailers };
  }

  /** Emits `finish` once: the whole answer is handed to the connection. */
  finish(): void {
    if (this.finishEmitted) return;
    this.finishEmitted = true;
    this.emit('finish');
  }

  /** The stream closed: the response says so, as Node's does when its connection closes. */
  streamClosed(): void {
    this.closed = true;
    if (this.stream.writableFinished) this.finish();
    this.emit('close');
  }

  /** Whether the stream closed: nothing more can be sent. */
  get streamIsClosed(): boolean {
    return this.closed;
  }
}
