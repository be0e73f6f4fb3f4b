/**
 * @module ratelimit/grpc/incomplete-requests
 * Bounds on calls whose request has not fully arrived. grpc-js buffers a
 * request message until its last byte and runs a unary handler only at the
 * client's half-close, with no time limit: a stream that sent its headers,
 * or all but one byte of its message, held its buffer for as long as the
 * client kept the connection, and 20 connections of 1000 such streams took
 * the process from 266 MB to 1 GB. Here a call's request must be complete
 * (for a streaming request: its next message or its end must come) within
 * `requestTimeoutMs`, and at most `maxIncompleteRequests` calls of the whole
 * server may be waiting for theirs; past either the call is answered and its
 * stream reset, so that its bytes are freed and it counts for nothing.
 */
import * as http2 from 'node:http2';
import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';

export interface IncompleteRequestLimits {
  /** How long a call's request may take to arrive, in ms. */
  readonly requestTimeoutMs: number;
  /** Most calls, of every connection together, waiting for their request. */
  readonly maxIncompleteRequests: number;
}

export interface IncompleteRequests {
  /** To be the first of the server's interceptors (it needs grpc-js's own call). */
  readonly interceptor: grpc.ServerInterceptor;
  /** Calls waiting for their request now. */
  readonly size: number;
}

/** A call waiting for its request, in the order calls began to wait. */
interface Waiting {
  /** When its request (or its next message) began to be awaited, by performance.now(). */
  since: number;
  /** Whether its request has all come, or the call is over. */
  done(): boolean;
  /** Answers it with `status` and resets its stream. */
  end(status: { code: grpc.status; details: string }): void;
}

/**
 * The HTTP/2 stream under grpc-js's base call, which its interceptor API
 * does not expose: only it can be reset. grpc-js 1.14 keeps it as `stream`;
 * should a later version not, calls are still answered on time, and their
 * streams left for the client to close.
 */
function streamOf(call: grpc.ServerInterceptingCallInterface): http2.ServerHttp2Stream | undefined {
  const stream = (call as unknown as { stream?: unknown }).stream;
  return stream instanceof Object && typeof (stream as http2.ServerHttp2Stream).close === 'function' && 'rstCode' in stream
    ? (stream as http2.ServerHttp2Stream)
    : undefined;
}

/** grpc-js 1.14's base call, as far as a unary request's arrival can be read off it. */
type BaseCall = grpc.ServerInterceptingCallInterface & { receivedHalfClose: boolean; metadataSent: boolean };

function isBaseCall(call: grpc.ServerInterceptingCallInterface): call is BaseCall {
  const c = call as Partial<BaseCall>;
  return typeof c.receivedHalfClose === 'boolean' && typeof c.metadataSent === 'boolean';
}

/**
 * A call with a single request message (ShouldRateLimit, a health Check or
 * Watch), read off grpc-js's own call rather than through an intercepting
 * call of its own: a layer of listeners on every call cost the rate-limit
 * service a fifth of its calls a second. Its request is whole at the
 * client's half-close, which grpc-js records.
 */
class UnaryWait implements Waiting {
  constructor(
    readonly call: BaseCall,
    readonly stream: http2.ServerHttp2Stream,
    public since: number,
  ) {}

  done(): boolean {
    return this.call.receivedHalfClose || this.stream.closed || this.stream.destroyed;
  }

  end(status: { code: grpc.status; details: string }): void {
    this.call.sendStatus(status);
    // Answered before its request was complete: the stream is reset, which RFC
    // 9113 (8.1) allows with NO_ERROR once the answer is sent, rather than left
    // to a client that may never send the rest. Node sends the reset after the
    // answer's frames; nothing was sent before it, since no handler has run.
    if (!this.call.metadataSent && !this.stream.closed && !this.stream.destroyed) this.stream.close(http2.constants.NGHTTP2_NO_ERROR);
  }
}

/** The tracker of `limits`; its interceptor goes first in the server's `interceptors`. */
export function boundIncompleteRequests(limits: IncompleteRequestLimits): IncompleteRequests {
  const { requestTimeoutMs, maxIncompleteRequests } = limits;
  /** In the order they began to wait: the first is the oldest. */
  const waiting = new Set<Waiting>();
  let timer: NodeJS.Timeout | undefined;
  let sweeping = false;

  // One timer, for the oldest call: a burst of thousands of calls costs no
  // timer each, and a call that completes costs a Set deletion.
  const schedule = () => {
    if (timer !== undefined || sweeping) return;
    const oldest = waiting.values().next();
    if (oldest.done) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        sweeping = true;
        // After this turn's reads (setImmediate runs after the poll phase): a
        // process held up past the bound reads the bytes that did come before
        // it judges a request late.
        setImmediate(sweep);
      },
      Math.max(0, oldest.value.since + requestTimeoutMs - performance.now()),
    );
    timer.unref();
  };
  const sweep = () => {
    sweeping = false;
    const now = performance.now();
    for (const call of waiting) {
      if (call.done()) {
        waiting.delete(call);
        continue;
      }
      if (now - call.since < requestTimeoutMs) break;
      waiting.delete(call);
      call.end({ code: grpc.status.DEADLINE_EXCEEDED, details: `the request did not arrive within ${requestTimeoutMs} ms` });
    }
    schedule();
  };
  const wait = (call: Waiting) => {
    waiting.delete(call);
    call.since = performance.now();
    waiting.add(call);
    schedule();
  };
  /** Calls whose request has come leave the set lazily: those at its head as each call comes, all of them when it is full. */
  const dropDone = (all: boolean) => {
    for (const call of waiting) {
      if (call.done()) waiting.delete(call);
      else if (!all) return;
    }
  };

  /** A call with a stream of requests (reflection), watched through an intercepting call of its own. */
  const streamingWait = (method: grpc.ServerMethodDefinition<unknown, unknown>, next: grpc.ServerInterceptingCallInterface) => {
    const stream = streamOf(next);
    let state: 'incomplete' | 'complete' | 'ended' = 'incomplete';
    const call: Waiting = {
      since: 0,
      done: () => state !== 'incomplete',
      end: (status) => {
        if (state !== 'incomplete') return;
        state = 'ended';
        // Its stream is reset in onCancel, once grpc-js has sent the status
        // (trailers wait for the stream's 'wantTrailers').
        intercepting.sendStatus(status);
      },
    };
    const intercepting = new grpc.ServerInterceptingCall(next, {
      start: (start) =>
        start({
          onReceiveMessage(message, pass) {
            if (state !== 'incomplete') return;
            // Waited for message by message.
            if (method.requestStream) wait(call);
            pass(message);
          },
          onReceiveHalfClose(pass) {
            if (state !== 'incomplete') return;
            state = 'complete';
            waiting.delete(call);
            pass();
          },
          // Every call ends here: cancelled by its client, or answered (grpc-js
          // reports each status sent as a cancel, after sending it).
          onCancel() {
            waiting.delete(call);
            const incomplete = state !== 'complete';
            state = 'ended';
            // Answered before its request was complete: reset, as UnaryWait does.
            if (incomplete && stream && !stream.closed && !stream.destroyed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
          },
        }),
    });
    return { call, intercepting };
  };

  const interceptor: grpc.ServerInterceptor = (method, next) => {
    dropDone(false);
    if (waiting.size >= maxIncompleteRequests) {
      dropDone(true);
      if (waiting.size >= maxIncompleteRequests) {
        // Full: the call that has waited longest makes room. A well-behaved
        // client's request arrives with its headers, so the oldest are those of
        // clients that stopped sending.
        const oldest = waiting.values().next().value!;
        waiting.delete(oldest);
        oldest.end({
          code: grpc.status.RESOURCE_EXHAUSTED,
          details: `the server waits for at most ${maxIncompleteRequests} incomplete requests, and this one waited longest`,
        });
      }
    }
    const stream = method.requestStream ? undefined : streamOf(next);
    if (stream !== undefined && isBaseCall(next)) {
      wait(new UnaryWait(next, stream, 0));
      // grpc-js chains whatever each interceptor returns as the next call: its own call is one.
      return next as unknown as grpc.ServerInterceptingCall;
    }
    const { call, intercepting } = streamingWait(method as grpc.ServerMethodDefinition<unknown, unknown>, next);
    wait(call);
    return intercepting;
  };

  return {
    interceptor,
    get size() {
      dropDone(true);
      return waiting.size;
    },
  };
}
