/**
 * @module gateway/upstream/retrying
 * Whether a request forwarded to a remote upstream (./forward) is tried
 * again, as the route's `retry_policy` says (./retry): after a try that got
 * no answer, which this reads for what it failed of (and throws the
 * client's answer when it is not tried again), or after an answer whose
 * status the policy retries; each retry under the circuit breakers'
 * `max_retries`, after Envoy's jittered back-off.
 */
import type { Context } from 'koa';
import { bodyFailure, HttpError } from '../../http';
import type { UpstreamFailure } from '../events';
import { AnswerBodyError, type UpstreamCall } from './call';
import type { RouteUpstream } from './endpoints/clusters';
import type { Endpoint } from './endpoints/endpoint';
import type { ExchangeTimers } from './exchange-timers';
import { failureOf, tryFailureOf, upstreamFailure } from './failures';
import { backoffMs, retriesFailure, type TryFailure } from './retry';
import type { ForwardOptions } from './types';

/** What deciding on another try reads of its request. */
export interface RetriedExchange {
  readonly ctx: Context;
  readonly upstream: RouteUpstream;
  readonly options: ForwardOptions;
  readonly timers: ExchangeTimers;
  /** The longest silence of the answer's body. */
  readonly gapMs: number;
  /** The client's upload went silent past `idle_timeout_ms`. */
  readonly stalled: boolean;
  /** The client left. */
  readonly gone: boolean;
  /** The listener of the client leaving. */
  readonly onClose: () => void;
  /** Whether the try under way was aborted because its client left. */
  clientLeft(): boolean;
  /** Gives up what the try under way took. */
  finish(): void;
  report(failure: UpstreamFailure): void;
  /** The answer for `timeout_ms` passing. */
  timeout(cause?: unknown): HttpError;
  /** The answer for an upload silent past `idle_timeout_ms`. */
  stall(): HttpError;
}

/** The tries left to one request, and its place under `max_retries` while it holds one. */
export class Retrying {
  /** Tries after the first that may be made: none once the body streamed. */
  left: number;
  /** Whether the policy tries the status of the last answer again. */
  statusRetried = false;
  private holdsRetry = false;

  constructor(private readonly exchange: RetriedExchange) {
    this.left = exchange.upstream.retry?.numRetries ?? 0;
  }

  /** Whether the try after try number `tries` (0 for the first) is made, when the policy `wants` it; takes its place under `max_retries`. */
  may(tries: number, wants: boolean): boolean {
    const { exchange } = this;
    if (!wants || tries >= this.left || exchange.timers.timedOut || exchange.gone) return false;
    const { upstream, options } = exchange;
    const breaker = upstream.cluster.breakers[upstream.priority];
    if (this.holdsRetry) breaker.endRetry();
    this.holdsRetry = breaker.startRetry();
    if (this.holdsRetry) options.events?.upstreamRetry?.(options.route ?? '');
    return this.holdsRetry;
  }

  /** Gives up the place under `max_retries`, if one is held: the request is over. */
  release(): void {
    const { upstream } = this.exchange;
    if (this.holdsRetry) upstream.cluster.breakers[upstream.priority].endRetry();
  }

  /** Waits the back-off before retry number `retry`; throws the answer when the request ended meanwhile. */
  async backoff(retry: number): Promise<void> {
    const { exchange } = this;
    await new Promise((resolve) => setTimeout(resolve, backoffMs(exchange.upstream.retry!, retry)));
    if (exchange.timers.timedOut) {
      exchange.report('timeout');
      throw exchange.timeout();
    }
    if (exchange.gone) throw HttpError.of('CLIENT_LEFT');
  }

  /** A try that got no answer: returns once the next try may go, or throws the request's answer. */
  async failed(err: unknown, attempt: UpstreamCall, endpoint: Endpoint, tries: number): Promise<void> {
    const { exchange } = this;
    const { options, upstream } = exchange;
    const retry = upstream.retry;
    exchange.timers.stopTry();
    if (err instanceof AnswerBodyError) {
      // The headers came (see Exchange.headersCame), then a small body failed in the same read, before it was read whole.
      exchange.finish();
      if (this.may(tries, this.statusRetried)) return this.backoff(tries + 1);
      exchange.ctx.res.off('close', exchange.onClose);
      // Nothing is sent yet: a body broken where its headers are is still answered with the error body.
      if (exchange.clientLeft()) throw err.cause;
      const failure = failureOf(err.cause);
      exchange.report(failure);
      upstream.cluster.outcome(endpoint, true);
      throw upstreamFailure(failure, err.cause, exchange.gapMs);
    }
    exchange.finish();
    const failure = this.failure(err, attempt, endpoint);
    if (this.may(tries, retry !== null && retriesFailure(retry, failure))) return this.backoff(tries + 1);
    if (failure !== 'per-try-timeout') {
      exchange.report(failureOf(err));
      throw upstreamFailure(failureOf(err), err, options.timeoutMs);
    }
    exchange.report('timeout');
    throw HttpError.of('UPSTREAM_TRY_TIMEOUT', { perTryTimeoutMs: retry!.perTryTimeoutMs }, { cause: err });
  }

  /**
   * What a try that got no answer failed of; throws the final answer when it
   * is no failure of the upstream's (the body limit, a stalled upload, a
   * client that left) or may not be retried (`timeout_ms`, `idle_timeout_ms`).
   */
  private failure(err: unknown, abort: UpstreamCall, endpoint: Endpoint): TryFailure {
    const { exchange } = this;
    const { options, upstream, timers } = exchange;
    // A body that failed on its way (too long, malformed) is the client's fault, not the upstream's.
    const failed = bodyFailure(exchange.ctx.req);
    if (failed !== undefined) throw failed;
    if (exchange.stalled) throw exchange.stall();
    // A client that left is no failure of the upstream's.
    if (abort.aborted && !timers.timedOut && timers.tryTimedOut === null)
      throw upstreamFailure(failureOf(err), err, options.timeoutMs);
    upstream.cluster.outcome(endpoint, true);
    if (timers.timedOut) {
      exchange.report('timeout');
      throw exchange.timeout(err);
    }
    if (timers.tryTimedOut === 'idle') {
      exchange.report('timeout');
      throw HttpError.of('UPSTREAM_IDLE_TIMEOUT', { idleTimeoutMs: upstream.idleTimeoutMs }, { cause: err });
    }
    return timers.tryTimedOut === 'per-try' ? 'per-try-timeout' : tryFailureOf(err);
  }
}
