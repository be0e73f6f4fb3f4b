/**
 * @module auth/remote/answer
 * An auth service's answer read whole through undici's `dispatch`, within a
 * size and a time limit. `request()` would give every check a Readable, an
 * abort listener and an async scope, and `AbortSignal.timeout` an
 * EventTarget and a timer of its own; a check asked on every request
 * needs none of them.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { undici } from '../../http';

/** An answer read whole. */
export interface WholeAnswer {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** Why an answer was not read: longer than allowed, or not whole in time. */
export class AnswerLimitError extends Error {
  constructor(readonly limit: 'size' | 'time') {
    super(limit === 'size' ? 'the answer is too long' : 'the answer did not come in time');
    this.name = 'AnswerLimitError';
  }
}

const expire = (reader: WholeAnswerReader): void => reader.fail(new AnswerLimitError('time'));

/** The dispatch handler: resolves with the final answer, rejects with undici's error or an {@link AnswerLimitError}. */
class WholeAnswerReader implements Dispatcher.DispatchHandler {
  readonly answer: Promise<WholeAnswer>;
  private controller: Dispatcher.DispatchController | null = null;
  private statusCode = 0;
  private headers: IncomingHttpHeaders = {};
  private chunks: Buffer[] = [];
  private size = 0;
  private failed: Error | null = null;
  private readonly timer: NodeJS.Timeout;
  private resolve!: (answer: WholeAnswer) => void;
  private reject!: (err: Error) => void;

  constructor(
    private readonly maxBytes: number,
    timeoutMs: number,
  ) {
    this.answer = new Promise<WholeAnswer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.timer = setTimeout(expire, timeoutMs, this);
  }

  /** Ends the request, and the wait, with `err`. */
  fail(err: Error): void {
    if (this.failed !== null) return;
    this.failed = err;
    clearTimeout(this.timer);
    this.reject(err);
    // undici errs the request at once (its onResponseError is then ignored), or at its start.
    this.controller?.abort(new (undici().errors.RequestAbortedError)());
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.failed !== null) controller.abort(new (undici().errors.RequestAbortedError)());
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // 1xx: informational, the answer is still to come.
    if (statusCode < 200 || this.failed !== null) return;
    // A length said up front that is too long is refused without reading it.
    if (Number(headers['content-length']) > this.maxBytes) {
      this.fail(new AnswerLimitError('size'));
      return;
    }
    this.statusCode = statusCode;
    this.headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.failed !== null) return;
    this.size += chunk.length;
    if (this.size > this.maxBytes) this.fail(new AnswerLimitError('size'));
    else this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.failed !== null) return;
    clearTimeout(this.timer);
    const chunks = this.chunks;
    this.resolve({
      statusCode: this.statusCode,
      headers: this.headers,
      body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks),
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    if (this.failed !== null) return;
    this.failed = err;
    clearTimeout(this.timer);
    this.reject(err);
  }
}

/**
 * Sends `options` through `dispatcher` and reads the answer whole: at most
 * `maxBytes` of body, all within `timeoutMs`, connecting included.
 */
export function readWholeAnswer(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  maxBytes: number,
  timeoutMs: number,
): Promise<WholeAnswer> {
  const reader = new WholeAnswerReader(maxBytes, timeoutMs);
  dispatcher.dispatch(options, reader);
  return reader.answer;
}
