/**
 * @module gateway/upstream/grpc/answer
 * The body of a gRPC answer passed on from its upstream: the upstream's
 * stream read straight into the response once the gateway's middleware is
 * done with the answer's headers (http/respond's `WRITE_TO`), with no
 * stream or pipe between them. The upstream is read as fast as the client
 * takes the answer: a write the response refuses pauses it until the
 * response drains. The answer ends with the call's status: its trailers
 * for gRPC, its trailer frame for gRPC-Web (base64 frame by frame for a
 * text answer, see ./web-text).
 */
import type { ServerResponse } from 'node:http';
import type { ClientHttp2Stream } from 'node:http2';
import { Stream } from 'node:stream';
import { WRITE_TO, type SelfWritingBody } from '../../../http';
import { trailerFrame, type GrpcWebCall } from './web';
import { GrpcWebTextEncoder } from './web-text';

/** Trailers as they are passed on. */
export type Trailers = Record<string, string | string[]>;

/** What the answer tells the call it belongs to. */
export interface AnswerOwner {
  /** The answer is not wanted any more (replaced, or its response ended without it): the call is cancelled. */
  abandoned(): void;
}

const ANSWER = Symbol('gRPC answer');
type AnsweringStream = ClientHttp2Stream & { [ANSWER]?: GrpcAnswer };

// Listeners of the upstream's stream, which find their answer on it: no closure per call.
function onUpstreamData(this: AnsweringStream, chunk: Buffer): void {
  this[ANSWER]!.pass(chunk);
}

function onUpstreamEnd(this: AnsweringStream): void {
  this[ANSWER]!.upstreamEnded();
}

const NO_TRAILERS: Trailers = {};

/**
 * The answer of one call, set as the response's body. A legacy `Stream`:
 * what the gateway does with a streamed body (log it once it ends, destroy
 * it when another body replaces it) it does with this one.
 */
export class GrpcAnswer extends Stream implements SelfWritingBody {
  private res: ServerResponse | null = null;
  /** The upstream's status came: the answer ends once its messages are passed on. */
  private statusKnown = false;
  /** The answer is to end as soon as it is written: the call ended before the middleware was done. */
  private endPending = false;
  private ended = false;
  /** gRPC-Web: what the trailer frame carries. */
  private webTrailers: Trailers = NO_TRAILERS;
  private readonly text: GrpcWebTextEncoder | null;

  constructor(
    private readonly upstream: ClientHttp2Stream,
    private readonly web: GrpcWebCall | null,
    private readonly owner: AnswerOwner,
  ) {
    super();
    this.text = web?.textAnswer === true ? new GrpcWebTextEncoder() : null;
  }

  /** Writes the answer to `res`: what has come, then the rest as it comes. */
  [WRITE_TO](res: ServerResponse): void {
    if (this.res !== null) return;
    this.res = res;
    if (this.endPending) {
      this.finish();
      return;
    }
    const upstream = this.upstream as AnsweringStream;
    // Headers go at once when nothing is there to go with them: a client may wait for them before it writes.
    if (upstream.readableLength === 0) res.flushHeaders();
    upstream[ANSWER] = this;
    upstream.on('data', onUpstreamData);
    upstream.on('end', onUpstreamEnd);
  }

  /** Where a server's own response handling pipes a streamed body (Koa's, when the gateway is mounted in an app): written the same. */
  override pipe<T extends NodeJS.WritableStream>(destination: T): T {
    this[WRITE_TO](destination as unknown as ServerResponse);
    return destination;
  }

  /** Passes on a chunk of the upstream's messages. */
  pass(chunk: Buffer): void {
    if (this.ended) return;
    const res = this.res!;
    let written: boolean;
    if (this.text === null) written = res.write(chunk);
    else {
      const text = this.text.encode(chunk);
      if (text === '') return;
      written = res.write(text, 'latin1');
    }
    if (!written) {
      const upstream = this.upstream;
      upstream.pause();
      res.once('drain', () => upstream.resume());
    }
  }

  /** The upstream's messages are all passed on: the answer ends, if its status came. */
  upstreamEnded(): void {
    if (this.statusKnown) this.finish();
  }

  /** The upstream's status came; a gRPC-Web answer carries `trailers` in its trailer frame. */
  statusCame(trailers: Trailers | null): void {
    this.statusKnown = true;
    if (trailers !== null) this.webTrailers = trailers;
  }

  /**
   * Ends the answer after what was passed on: at once, or as soon as it is
   * written. A gRPC-Web answer's trailer frame carries `trailers` when
   * given (the gateway's own status), else the upstream's.
   */
  end(trailers?: Trailers): void {
    if (trailers !== undefined) this.webTrailers = trailers;
    if (this.res === null) this.endPending = true;
    else this.finish();
  }

  /** Cancels the call, unless its answer is done: the response no longer wants it. */
  destroy(): void {
    if (this.ended) return;
    this.ended = true;
    this.owner.abandoned();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    const res = this.res!;
    this.upstream.off('data', onUpstreamData);
    if (this.web === null) res.end();
    else if (this.text === null) res.end(trailerFrame(this.webTrailers));
    else res.end(this.text.flush() + trailerFrame(this.webTrailers).toString('base64'), 'latin1');
    // For whoever piped it (see pipe).
    this.emit('end');
    this.emit('close');
  }
}
