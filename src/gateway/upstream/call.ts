/**
 * @module gateway/upstream/call
 * One try of a forwarded request, made with undici's `dispatch`: its answer
 * read whole when it is small and its length said, else streamed. undici's
 * `request()` gives every answer a Readable, an abort listener and an async
 * scope, and reading a small body out of it again costs a promise and a
 * copy: together about as much as the rest of a forward.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { finished, Readable } from 'node:stream';
import { errors, type Dispatcher } from 'undici';
import { ignore } from './proxy';

/**
 * Answers up to this size with a known length are read whole and sent as one
 * buffer: koa's stream pipeline costs more per request than the copy. Larger
 * or unsized answers stream.
 */
const BUFFERED_BODY_MAX = 64 * 1024;

/** What undici's own answer bodies buffer before they pause the connection. */
const STREAM_HIGH_WATER_MARK = 64 * 1024;

/** What a discarded answer (one retried) is read of, at most, to keep its connection; past it the connection is closed. */
const DISCARD_LIMIT = 128 * 1024;

/** Whether the answer has a body that is small enough, and its length said, to read whole. */
export function smallBody(method: string, status: number, headers: IncomingHttpHeaders): boolean {
  if (method === 'HEAD' || status === 204 || status === 304) return false;
  const length = headers['content-length'];
  if (length === undefined) return false;
  const n = Number(length);
  return n > 0 && n <= BUFFERED_BODY_MAX;
}

/** An upstream's answer: its status, its headers, and its body read whole or on its way. */
export interface UpstreamAnswer {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer | Readable;
}

/** An answer whose body failed after its headers came, before it was read whole. */
export class AnswerBodyError extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message, { cause });
    this.name = 'AnswerBodyError';
  }
}

/** A streamed answer body: reading it lets the connection go on; destroying it early aborts the try. */
class AnswerStream extends Readable {
  private ended = false;

  constructor(private readonly controller: Dispatcher.DispatchController) {
    super({ highWaterMark: STREAM_HIGH_WATER_MARK });
  }

  override _read(): void {
    this.controller.resume();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.ended) this.controller.abort(err ?? new errors.RequestAbortedError());
    callback(err);
  }

  data(chunk: Buffer): void {
    if (!this.push(chunk)) this.controller.pause();
  }

  end(): void {
    this.ended = true;
    this.push(null);
  }
}

/** Told when an answer's headers come, before its body. */
export interface CallWatcher {
  headersCame(statusCode: number, headers: IncomingHttpHeaders): void;
}

/**
 * One try under way, as the handler of undici's `dispatch`. `answer`
 * resolves with the headers and a stream, or once a small body is read
 * whole; it rejects with undici's error when the try fails before that, with
 * an {@link AnswerBodyError} when a small body fails after its headers.
 */
export class UpstreamCall implements Dispatcher.DispatchHandler {
  readonly answer: Promise<UpstreamAnswer>;
  aborted = false;
  private controller: Dispatcher.DispatchController | null = null;
  private statusCode = 0;
  private headers: IncomingHttpHeaders | null = null;
  private chunks: Buffer[] | null = null;
  private stream: AnswerStream | null = null;
  private resolve!: (answer: UpstreamAnswer) => void;
  private reject!: (err: Error) => void;

  constructor(
    private readonly method: string,
    private readonly watcher: CallWatcher,
  ) {
    this.answer = new Promise<UpstreamAnswer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Ends the try, whatever it is at: waiting for a connection, for the answer, or streaming it. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const reason = new errors.RequestAbortedError();
    // Whoever reads the stream may not listen for its errors yet: ended here, that is no failure to report.
    if (this.stream !== null) this.stream.on('error', ignore).destroy(reason);
    else this.controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.aborted) controller.abort(new errors.RequestAbortedError());
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // 1xx: informational, the answer is still to come.
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    this.headers = headers;
    this.watcher.headersCame(statusCode, headers);
    if (smallBody(this.method, statusCode, headers)) {
      this.chunks = [];
      return;
    }
    this.stream = new AnswerStream(controller);
    this.resolve({ statusCode, headers, body: this.stream });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.chunks !== null) this.chunks.push(chunk);
    else this.stream?.data(chunk);
  }

  onResponseEnd(): void {
    if (this.stream !== null) {
      this.stream.end();
      return;
    }
    const chunks = this.chunks ?? [];
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    this.resolve({ statusCode: this.statusCode, headers: this.headers ?? {}, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    if (this.stream !== null) {
      // Its error comes in the next tick: possibly before whoever reads the stream listens for it (as undici's own bodies).
      if (!this.stream.destroyed) this.stream.on('error', ignore).destroy(err);
      return;
    }
    this.reject(this.headers === null ? err : new AnswerBodyError(err));
  }
}

/** Sends one try through `pool` and returns it under way. */
export function call(pool: Dispatcher, options: Dispatcher.DispatchOptions, method: string, watcher: CallWatcher): UpstreamCall {
  const handler = new UpstreamCall(method, watcher);
  pool.dispatch(options, handler);
  return handler;
}

/**
 * Reads an answer that is not passed on (a status retried) to its end, so
 * that its connection stays usable; a long one is cut, closing it.
 */
export function discard(body: Buffer | Readable): Promise<void> {
  if (Buffer.isBuffer(body)) return Promise.resolve();
  return new Promise((resolve) => {
    let read = 0;
    body.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > DISCARD_LIMIT) body.destroy();
    });
    finished(body, () => resolve());
  });
}
