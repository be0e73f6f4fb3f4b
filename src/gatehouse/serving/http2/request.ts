/**
 * @module gatehouse/serving/http2/request
 * An HTTP/2 request as the app reads an HTTP/1.1 one: Node's
 * IncomingMessage surface over an HTTP/2 stream, made for each stream at
 * less cost than Node's compatibility layer (no listener on the stream
 * until the body is read, no proxy of the socket). What differs from
 * HTTP/1.1 is translated once, here:
 * - `Host` is the `:authority` when the client sent no Host (RFC 9113
 *   §8.3.1), so that everything that reads the host reads the same one;
 * - `rawHeaders` lists the header fields alone, as over HTTP/1.1: the
 *   pseudo-headers are in `headers`, as Node gives them;
 * - `socket` is the connection's, shared by the requests of a connection.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';

/** Where a stream keeps its request. */
export const REQUEST = Symbol('request');
type RequestStream = ServerHttp2Stream & { [REQUEST]?: Http2Request };

/** The trailers of a request that sent none (most): one frozen object for all. */
const EMPTY_TRAILERS: IncomingHttpHeaders = Object.freeze({});
const NO_RAW_TRAILERS: string[] = Object.freeze([]) as unknown as string[];

/** The number of pseudo-header entries at the head of Node's raw list (`:method`, `:path`...). */
function pseudoEntries(raw: readonly string[]): number {
  let i = 0;
  while (i < raw.length && raw[i].charCodeAt(0) === 58) i += 2;
  return i;
}

/**
 * Node's headers of a stream, in an object of the kind Node gives an
 * HTTP/1.1 request: its own has no prototype, which puts V8 in the slow
 * mode of a dictionary for every read of every header. `__proto__` is left
 * out, as Node's HTTP/1.1 parser leaves it out.
 */
function fastHeaders(given: IncomingHttpHeaders): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (const name in given) if (name !== '__proto__') headers[name] = given[name];
  return headers;
}

function onStreamData(this: RequestStream, chunk: Buffer): void {
  const req = this[REQUEST];
  if (req === undefined || req.destroyed) return;
  if (!req.push(chunk)) this.pause();
}

function onStreamEnd(this: RequestStream): void {
  const req = this[REQUEST];
  if (req === undefined || req.destroyed) return;
  req.complete = true;
  req.push(null);
}

function onStreamTrailers(this: RequestStream, trailers: IncomingHttpHeaders, _flags: number, raw: string[]): void {
  const req = this[REQUEST];
  if (req === undefined) return;
  req.trailers = trailers;
  req.rawTrailers = raw;
}

function onStreamTimeout(this: RequestStream): void {
  this[REQUEST]?.emit('timeout');
}

/** The error a request ends with when its client reset the stream before the end of its body, as Node's HTTP/1.1 one. */
function abortedError(): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error('aborted');
  err.code = 'ECONNRESET';
  return err;
}

/** A request received on an HTTP/2 stream. */
export class Http2Request extends Readable {
  readonly headers: IncomingHttpHeaders;
  /** The header fields as they came, name and value in turn; pseudo-headers aside. */
  readonly rawHeaders: string[];
  method: string;
  url: string;
  readonly stream: ServerHttp2Stream;
  /** The connection's socket (TLS or TCP). */
  readonly socket: Socket;
  /** The whole body has come (at once for a request without one). */
  complete: boolean;
  /** The client reset the stream before the end of its body. */
  aborted = false;
  trailers: IncomingHttpHeaders = EMPTY_TRAILERS;
  rawTrailers: string[] = NO_RAW_TRAILERS;
  private reading = false;

  constructor(stream: ServerHttp2Stream, given: IncomingHttpHeaders, rawHeaders: string[], socket: Socket) {
    super({ autoDestroy: false });
    this.stream = stream;
    this.socket = socket;
    const headers = fastHeaders(given);
    this.headers = headers;
    const pseudo = pseudoEntries(rawHeaders);
    this.rawHeaders = pseudo === 0 ? rawHeaders : rawHeaders.slice(pseudo);
    this.method = headers[':method'] as string;
    this.url = (headers[':path'] as string | undefined) ?? '';
    const authority = headers[':authority'];
    if (headers.host === undefined && authority !== undefined) headers.host = authority as string;
    this.complete = stream.endAfterHeaders;
    (stream as RequestStream)[REQUEST] = this;
  }

  get httpVersion(): string {
    return '2.0';
  }

  get httpVersionMajor(): number {
    return 2;
  }

  get httpVersionMinor(): number {
    return 0;
  }

  /** The same as `socket`, as Node's alias. */
  get connection(): Socket {
    return this.socket;
  }

  /** The `:authority` the client sent. */
  get authority(): string | undefined {
    return this.headers[':authority'] as string | undefined;
  }

  /** The `:scheme` the client sent. */
  get scheme(): string | undefined {
    return this.headers[':scheme'] as string | undefined;
  }

  override _read(): void {
    if (this.reading) {
      this.stream.resume();
      return;
    }
    this.reading = true;
    const stream = this.stream;
    // Ended before it was read: a body that ended in its headers, or an empty one Node has read to its end already.
    if (stream.endAfterHeaders || stream.readableEnded) {
      this.complete = true;
      this.push(null);
      return;
    }
    stream.on('trailers', onStreamTrailers);
    stream.on('end', onStreamEnd);
    stream.on('data', onStreamData);
  }

  override _destroy(err: Error | null, callback: (err: Error | null) => void): void {
    // The stream stays: the answer may still go out on it (a body refused for its length is answered 413).
    if (this.reading) this.stream.pause();
    callback(err !== null && this.listenerCount('error') > 0 ? err : null);
  }

  /** Emits `timeout` (and calls `callback`) after `ms` without a frame on the stream; 0 stops it. */
  setTimeout(ms: number, callback?: () => void): this {
    if (callback) this.on('timeout', callback);
    const stream = this.stream;
    if (stream.destroyed) return this;
    if (stream.listenerCount('timeout') === 0 && ms > 0) stream.on('timeout', onStreamTimeout);
    stream.setTimeout(ms);
    return this;
  }

  /**
   * The stream closed: a request whose body had not all come was cut
   * short by its client, and fails as an HTTP/1.1 request whose connection
   * closed does ('aborted', then an ECONNRESET error to its readers).
   */
  streamClosed(): void {
    if (!this.complete) {
      this.aborted = true;
      this.emit('aborted');
      this.destroy(abortedError());
    } else if (!this.destroyed) {
      this.destroy();
    }
  }
}
