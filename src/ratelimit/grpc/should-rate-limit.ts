/**
 * @module ratelimit/grpc/should-rate-limit
 * The handler of `ShouldRateLimit`, which both services share: a request
 * the decoder refused is answered INVALID_ARGUMENT; the others are decided
 * together at the end of the event loop's turn they were read in, unless
 * their caller has given up by then; a store's failure is answered
 * UNAVAILABLE, its details kept inside.
 */
import type * as grpc from '@grpc/grpc-js';
import { grpcJs } from '../../platform';
import type { RateLimiter, RateLimitRequest, RateLimitResponse } from '../types';
import { REFUSED, type RefusedRequest } from './messages/request-decoder';

/** A call read and checked, to be decided at the end of its turn of the event loop. */
interface Waiting {
  readonly call: grpc.ServerUnaryCall<unknown, RateLimitResponse>;
  readonly callback: grpc.sendUnaryData<RateLimitResponse>;
  readonly request: RateLimitRequest;
}

/** Error codes of the typed face that map to a gRPC status. */
function grpcError(err: unknown): grpc.ServiceError | { code: grpc.status; details: string } {
  if ((err as { code?: unknown })?.code === 'INVALID_ARGUMENT') {
    return { code: grpcJs().status.INVALID_ARGUMENT, details: (err as Error).message };
  }
  // Store failures: the caller applies its failure mode; the details stay inside.
  return { code: grpcJs().status.UNAVAILABLE, details: 'rate-limit store unavailable' };
}

/**
 * The `ShouldRateLimit` handler deciding with `service`; `arrived` is told
 * of each call once its request is read whole.
 */
export function shouldRateLimitHandler(
  service: RateLimiter,
  arrived: (call: object) => void,
): grpc.handleUnaryCall<RateLimitRequest | RefusedRequest, RateLimitResponse> {
  /**
   * The calls read in this turn of the event loop, decided at its end. A
   * service that was stopped or held up finds calls and their callers'
   * cancels waiting together in its socket, and grpc-js runs a call's
   * handler before it reads the cancel that follows: decided at once, the
   * call would be counted for a caller that had given up.
   */
  let waiting: Waiting[] = [];
  const decideNow = service.decide?.bind(service);
  const decideWaiting = () => {
    const calls = waiting;
    waiting = [];
    for (let i = 0; i < calls.length; i++) decide(calls[i]);
  };

  const decide = ({ call, callback, request }: Waiting) => {
    // A call cancelled, or past its deadline, while it waited in this process
    // is not decided: its caller has given up, and a hit counted now would
    // be one nobody was answered for. The caller's deadline is the wait for
    // the store; should the caller leave before the store answers, a hit it
    // counted is taken back.
    if (call.cancelled) return;
    const deadline = call.getDeadline();
    const left = (deadline instanceof Date ? deadline.getTime() : deadline) - Date.now();
    if (left <= 0) {
      callback({ code: grpcJs().status.DEADLINE_EXCEEDED, details: 'the deadline passed before the decision' });
      return;
    }
    const options = { timeoutMs: left === Infinity ? undefined : left, gone: () => call.cancelled };
    // A limiter that decides at once (the memory store) is answered at once,
    // without a promise a call.
    let decided: RateLimitResponse | Promise<RateLimitResponse>;
    try {
      decided = decideNow ? decideNow(request, options) : service.shouldRateLimit(request, options);
    } catch (err) {
      callback(grpcError(err));
      return;
    }
    if (decided instanceof Promise) {
      decided.then(
        (response) => callback(null, response),
        (err: unknown) => callback(grpcError(err)),
      );
    } else callback(null, decided);
  };

  const shouldRateLimit: grpc.handleUnaryCall<RateLimitRequest | RefusedRequest, RateLimitResponse> = (
    call,
    callback,
  ) => {
    arrived(call);
    const request = call.request;
    if (REFUSED in request) {
      callback({ code: grpcJs().status.INVALID_ARGUMENT, details: request[REFUSED] });
      return;
    }
    if (waiting.length === 0) setImmediate(decideWaiting);
    waiting.push({ call, callback, request });
  };

  return shouldRateLimit;
}
