/**
 * @module ratelimit/grpc/port/incomplete-requests
 * Bounds on calls whose request has not fully arrived. grpc-js buffers a
 * request message until its last byte and runs a unary handler only at the
 * client's half-close, with no time limit: a stream that sent its headers,
 * or all but one byte of its message, would hold its buffer for as long as
 * the client kept the connection, and a few connections of such streams
 * would hold a message's worth of memory a stream, at no cost to the
 * client. Here a call's request must be complete (for a streaming request:
 * its next message or its end must come) within `requestTimeoutMs`, and at
 * most `maxIncompleteRequests` calls of the whole server may be waiting for
 * theirs; past either the call is answered and its stream reset, so that
 * its bytes are freed and it counts for nothing.
 */
import * as http2 from 'node:http2';
import { performance } from 'node:perf_hooks';
import type * as grpc from '@grpc/grpc-js';
import { baseCallProgress, grpcJs, http2StreamOf, interceptingCallOf, type BaseCallProgress } from '../../../platform';
import { QueuedCall, WaitQueue } from './wait-queue';

export interface IncompleteRequestLimits {
  /** How long a call's request may take to arrive, in ms. */
  readonly requestTimeoutMs: number;
  /** Most calls, of every connection together, waiting for their request. */
  readonly maxIncompleteRequests: number;
}

export interface IncompleteRequests {
  /** To be the first of the server's interceptors (it needs grpc-js's own call). */
  readonly interceptor: grpc.ServerInterceptor;
  /**
   * Tells that the request of `call`, the call a unary or server-streaming
   * handler is given, has all come: a handler's first step. A call not told
   * of is let go later, when it reaches the head of the queue.
   */
  arrived(call: object): void;
  /** Calls waiting for their request now. */
  readonly size: number;
}

/** A call waiting for its request. */
abstract class Waiting extends QueuedCall {
  /** Whether its request has all come, or the call is over. */
  abstract done(): boolean;
  /** Answers it with `status` and resets its stream. */
  abstract end(status: { code: grpc.status; details: string }): void;
}

/** grpc-js's own call, whose progress tells whether a unary request has arrived. */
type BaseCall = grpc.ServerInterceptingCallInterface & BaseCallProgress;

/**
 * A call with a single request message (ShouldRateLimit, a health Check or
 * Watch), read off grpc-js's own call rather than through an intercepting
 * call of its own, which would add a layer of listeners to every call. Its
 * request is whole at the client's half-close, which grpc-js records, and
 * its handler tells of it (`arrived`).
 */
class UnaryWait extends Waiting {
  constructor(
    readonly call: BaseCall,
    readonly stream: http2.ServerHttp2Stream,
  ) {
    super();
  }

  done(): boolean {
    return this.call.receivedHalfClose || this.stream.closed || this.stream.destroyed;
  }

  end(status: { code: grpc.status; details: string }): void {
    this.call.sendStatus(status);
    // Answered before its request was complete: the stream is reset, which RFC
    // 9113 (8.1) allows with NO_ERROR once the answer is sent, rather than left
    // to a client that may never send the rest. Node sends the reset after the
    // answer's frames; nothing was sent before it, since no handler has run.
    if (!this.call.metadataSent && !this.stream.closed && !this.stream.destroyed)
      this.stream.close(http2.constants.NGHTTP2_NO_ERROR);
  }
}

/** A call with a stream of requests (reflection), watched through an intercepting call of its own. */
class StreamingWait extends Waiting {
  state: 'incomplete' | 'complete' | 'ended' = 'incomplete';
  readonly intercepting: grpc.ServerInterceptingCall;

  constructor(
    method: grpc.ServerMethodDefinition<unknown, unknown>,
    next: grpc.ServerInterceptingCallInterface,
    queue: WaitQueue<Waiting>,
    wait: (call: Waiting) => void,
  ) {
    super();
    // Should grpc-js not keep it, calls are still answered on time, and their streams left for the client to close.
    const stream = http2StreamOf(next);
    this.intercepting = new (grpcJs().ServerInterceptingCall)(next, {
      start: (start) =>
        start({
          onReceiveMessage: (message, pass) => {
            if (this.state !== 'incomplete') return;
            // Waited for message by message.
            if (method.requestStream) wait(this);
            pass(message);
          },
          onReceiveHalfClose: (pass) => {
            if (this.state !== 'incomplete') return;
            this.state = 'complete';
            queue.remove(this);
            pass();
          },
          // Every call ends here: cancelled by its client, or answered (grpc-js
          // reports each status sent as a cancel, after sending it).
          onCancel: () => {
            queue.remove(this);
            const incomplete = this.state !== 'complete';
            this.state = 'ended';
            // Answered before its request was complete: reset, as UnaryWait does.
            if (incomplete && stream && !stream.closed && !stream.destroyed)
              stream.close(http2.constants.NGHTTP2_NO_ERROR);
          },
        }),
    });
  }

  done(): boolean {
    return this.state !== 'incomplete';
  }

  end(status: { code: grpc.status; details: string }): void {
    if (this.state !== 'incomplete') return;
    this.state = 'ended';
    // Its stream is reset in onCancel, once grpc-js has sent the status
    // (trailers wait for the stream's 'wantTrailers').
    this.intercepting.sendStatus(status);
  }
}

/** Where grpc-js's call of a unary request keeps its place in the queue, for its handler to take it out. */
const UNARY_WAIT = Symbol('gatehouse.unaryWait');

/** The tracker of `limits`; its interceptor goes first in the server's `interceptors`. */
export function boundIncompleteRequests(limits: IncompleteRequestLimits): IncompleteRequests {
  const { requestTimeoutMs, maxIncompleteRequests } = limits;
  const waiting = new WaitQueue<Waiting>();
  let timer: NodeJS.Timeout | undefined;
  let sweeping = false;

  // One timer, for the oldest call: a burst of thousands of calls costs no
  // timer each, and a call that completes costs an unlinking.
  const schedule = () => {
    if (timer !== undefined || sweeping) return;
    const oldest = waiting.first;
    if (oldest === undefined) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        sweeping = true;
        // After this turn's reads (setImmediate runs after the poll phase): a
        // process held up past the bound reads the bytes that did come before
        // it judges a request late.
        setImmediate(sweep);
      },
      Math.max(0, oldest.since + requestTimeoutMs - performance.now()),
    );
    timer.unref();
  };
  const sweep = () => {
    sweeping = false;
    const now = performance.now();
    for (let call = waiting.first; call !== undefined;) {
      const next = waiting.after(call);
      if (call.done()) waiting.remove(call);
      else if (now - call.since < requestTimeoutMs) break;
      else {
        waiting.remove(call);
        call.end({
          code: grpcJs().status.DEADLINE_EXCEEDED,
          details: `the request did not arrive within ${requestTimeoutMs} ms`,
        });
      }
      call = next;
    }
    schedule();
  };
  const wait = (call: Waiting) => {
    call.since = performance.now();
    waiting.push(call);
    schedule();
  };
  /** Calls whose request has come and that were not taken out leave lazily: those at the head as each call comes, all of them when it is full. */
  const dropDone = (all: boolean) => {
    for (let call = waiting.first; call !== undefined;) {
      const next = waiting.after(call);
      if (call.done()) waiting.remove(call);
      else if (!all) return;
      call = next;
    }
  };

  const interceptor: grpc.ServerInterceptor = (method, next) => {
    dropDone(false);
    if (waiting.size >= maxIncompleteRequests) {
      dropDone(true);
      const oldest = waiting.first;
      if (waiting.size >= maxIncompleteRequests && oldest !== undefined) {
        // Full: the call that has waited longest makes room. A well-behaved
        // client's request arrives with its headers, so the oldest are those of
        // clients that stopped sending.
        waiting.remove(oldest);
        oldest.end({
          code: grpcJs().status.RESOURCE_EXHAUSTED,
          details: `the server waits for at most ${maxIncompleteRequests} incomplete requests, and this one waited longest`,
        });
      }
    }
    const stream = method.requestStream ? undefined : http2StreamOf(next);
    const base = stream === undefined ? undefined : baseCallProgress(next);
    if (stream !== undefined && base !== undefined) {
      const call = new UnaryWait(base, stream);
      (base as BaseCall & { [UNARY_WAIT]?: UnaryWait })[UNARY_WAIT] = call;
      wait(call);
      // grpc-js chains whatever each interceptor returns as the next call: its own call is one.
      return next as unknown as grpc.ServerInterceptingCall;
    }
    const call = new StreamingWait(method as grpc.ServerMethodDefinition<unknown, unknown>, next, waiting, wait);
    wait(call);
    return call.intercepting;
  };

  return {
    interceptor,
    arrived(call) {
      const base = interceptingCallOf(call) as { [UNARY_WAIT]?: UnaryWait } | undefined;
      const wait = base?.[UNARY_WAIT];
      if (wait !== undefined) waiting.remove(wait);
    },
    get size() {
      dropDone(true);
      return waiting.size;
    },
  };
}
