/**
 * @module gateway/upstream/call
 * One try of a forwarded request, made with undici's `dispatch` in the
 * handler interface its HTTP/1.1 client calls itself (`onConnect`,
 * `onHeaders`, `onData`, `onComplete`, `onError`): given a handler of the
 * controller interface, undici wraps it, for every request, in an adapter
 * and a controller of their own and parses the trailers too. Its answer
 * read whole when it is small, its length said and all of it came in the
 * read that brought its headers, else streamed. undici's
 * `request()` gives every answer a Readable, an abort listener and an async
 * scope, and reading a small body out of it again costs a promise and a
 * copy: together about as much as the rest of a forward.
 *
 * The silence allowed within an answer's body is watched here rather than by
 * undici's `bodyTimeout`, which takes a timer for every answer, even one
 * whose body came with its headers, and keeps it for a second or two after
 * it is cleared: under load, most of what a forward left for the old
 * generation of the heap to collect. Here a timer is taken only for a body
 * still to come once the read that brought its headers is parsed.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { finished, Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { HttpError, parseRawHeaders, undici } from '../../http';

/** The error listener of a stream given up: what fails in it after that is no one's to answer. */
function ignore(): void {}

/**
 * Answers up to this size with a known length are read whole and sent as one
 * buffer when they come whole with their headers: koa's stream pipeline
 * costs more per request than the copy. Larger or unsized answers stream,
 * and so does a small one still coming once that read is parsed, so that
 * its first bytes are not held back for the last.
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

  constructor(private readonly call: UpstreamCall) {
    super({ highWaterMark: STREAM_HIGH_WATER_MARK });
  }

  override _read(): void {
    this.call.resume();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.ended) this.call.stop(err ?? new (undici().errors.RequestAbortedError)());
    callback(err);
  }

  data(chunk: Buffer): void {
    if (!this.push(chunk)) this.call.paused = true;
  }

  end(): void {
    this.ended = true;
    this.push(null);
  }
}

/** Calls whose headers came in the read being parsed: to look at again once it is. */
let justAnswered: UpstreamCall[] = [];
let lookQueued = false;

function lookAgain(): void {
  const calls = justAnswered;
  justAnswered = [];
  lookQueued = false;
  for (const call of calls) call.headersParsed();
}

/** The body was silent for its gap: the try fails as with undici's own `bodyTimeout`, unless its reader holds it paused. */
function gapPassed(call: UpstreamCall): void {
  // Paused, the silence is the reader's: resume() starts the count again.
  if (call.paused) return;
  call.stop(new (undici().errors.BodyTimeoutError)());
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
  /** Told when a streamed answer fails after its headers of the upstream's doing (not its reader's). */
  brokeOff: ((err: Error) => void) | undefined = undefined;
  /** Whether the answer's reader holds the connection paused: its next data waits for {@link resume}. */
  paused = false;
  /** Why the try was stopped (see {@link stop}); null while it goes on. */
  private stopReason: Error | null = null;
  /** undici's way to stop the try, once it is handed to a connection. */
  private stopTry: ((reason: Error) => void) | null = null;
  /** undici's way to go on reading a paused answer. */
  private readOn: (() => void) | null = null;
  /** Whether the answer is over: ended, failed or aborted. */
  private over = false;
  private gapTimer: NodeJS.Timeout | undefined = undefined;
  private statusCode = 0;
  private headers: IncomingHttpHeaders | null = null;
  private chunks: Buffer[] | null = null;
  private stream: AnswerStream | null = null;
  private resolve!: (answer: UpstreamAnswer) => void;
  private reject!: (err: Error) => void;

  /**
   * `gapMs`: the longest silence within the answer's body before the try
   * fails with undici's `BodyTimeoutError` (0: none); the dispatch is to
   * be given `bodyTimeout: 0`.
   */
  constructor(
    private readonly method: string,
    private readonly watcher: CallWatcher,
    private readonly gapMs: number,
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
    this.end();
    const reason = new (undici().errors.RequestAbortedError)();
    // Whoever reads the stream may not listen for its errors yet: ended here, that is no failure to report.
    if (this.stream !== null) this.stream.on('error', ignore).destroy(reason);
    else this.stop(reason);
  }

  /** Stops the try at undici, which fails it with `reason` (onError); once it is on a connection, else when it gets one. */
  stop(reason: Error): void {
    if (this.stopReason !== null) return;
    this.stopReason = reason;
    this.stopTry?.(reason);
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.stopTry = abort;
    if (this.stopReason !== null) abort(this.stopReason);
  }

  /** The answer's headers, as undici reads them: `false` pauses the connection. */
  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    // 1xx: informational, the answer is still to come.
    if (statusCode < 200) return true;
    this.readOn = resume;
    const headers = parseRawHeaders(rawHeaders);
    this.statusCode = statusCode;
    this.headers = headers;
    this.watcher.headersCame(statusCode, headers);
    const small = smallBody(this.method, statusCode, headers);
    if (small || this.gapMs > 0) {
      justAnswered.push(this);
      if (!lookQueued) {
        lookQueued = true;
        queueMicrotask(lookAgain);
      }
    }
    if (small) this.chunks = [];
    else this.streamBody();
    return !this.paused;
  }

  /** Hands the answer on with its body as a stream, the chunks read so far first. */
  private streamBody(): void {
    const stream = (this.stream = new AnswerStream(this));
    const chunks = this.chunks;
    this.chunks = null;
    if (chunks !== null) for (const chunk of chunks) stream.data(chunk);
    this.resolve({ statusCode: this.statusCode, headers: this.headers!, body: stream });
  }

  /**
   * The read that brought the headers is parsed. An answer not over yet
   * streams from here on, and its body's gap timer is armed.
   */
  headersParsed(): void {
    if (this.over) return;
    if (this.chunks !== null) this.streamBody();
    if (this.gapMs > 0) this.gapTimer = setTimeout(gapPassed, this.gapMs, this);
  }

  /** The reader wants more: the connection goes on, and the silence counts from now. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.readOn?.();
    this.gapTimer?.refresh();
  }

  private end(): void {
    this.over = true;
    if (this.gapTimer !== undefined) clearTimeout(this.gapTimer);
  }

  /** A piece of the answer's body: `false` pauses the connection. */
  onData(chunk: Buffer): boolean {
    this.gapTimer?.refresh();
    if (this.chunks !== null) this.chunks.push(chunk);
    else this.stream?.data(chunk);
    return !this.paused;
  }

  onComplete(): void {
    this.end();
    if (this.stream !== null) {
      this.stream.end();
      return;
    }
    const chunks = this.chunks ?? [];
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    this.resolve({ statusCode: this.statusCode, headers: this.headers ?? {}, body });
  }

  onError(err: Error): void {
    this.end();
    if (this.stream !== null) {
      // Destroyed already, or aborted: its reader (the client) is gone, and that is no failure of the upstream's.
      if (this.stream.destroyed || this.aborted) return;
      this.brokeOff?.(err);
      // Its error comes in the next tick: possibly before whoever reads the stream listens for it (as undici's own bodies).
      this.stream.on('error', ignore).destroy(HttpError.of('UPSTREAM_CUT_SHORT', { cause: err }));
      return;
    }
    this.reject(this.headers === null ? err : new AnswerBodyError(err));
  }
}

/** Sends one try through `pool` and returns it under way; its body may be silent `gapMs` at most (0: no limit). */
export function call(
  pool: Dispatcher,
  options: Dispatcher.DispatchOptions,
  method: string,
  watcher: CallWatcher,
  gapMs: number,
): UpstreamCall {
  const handler = new UpstreamCall(method, watcher, gapMs);
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
