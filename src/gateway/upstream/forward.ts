/**
 * @module gateway/upstream/forward
 * Forwarding one request to a remote upstream with undici: an endpoint of its
 * cluster picked by the balancer, a place taken under the circuit breakers,
 * the request (./upstream-request) sent, its body streamed or kept to be sent
 * again when the route retries, tried again as `retry_policy` says after
 * Envoy's jittered back-off (./retrying), and the answer streamed back
 * through `ctx`, under Envoy's timers (./exchange-timers).
 */
import type { Context } from 'koa';
import type { IncomingHttpHeaders } from 'node:http';
import { HttpError, markCutShort } from '../../http';
import type { UpstreamFailure } from '../events';
import { deliverTry, type Delivery } from './deliver';
import { ExchangeTimers, shorter, type TimedExchange } from './exchange-timers';
import { failureOf } from './failures';
import { call, discard, type UpstreamAnswer, type UpstreamCall } from './call';
import type { Waiting } from './endpoints/breaker';
import type { RouteUpstream } from './endpoints/clusters';
import type { Endpoint } from './endpoints/endpoint';
import type { ForwardOptions } from './types';
import { bodyForRetries, DEFAULT_RETRY_BUFFER_BYTES, keepSocket, UploadWatch } from './upload';
import { retriesStatus } from './retry';
import { Retrying, type RetriedExchange } from './retrying';
import type { ChildSpan } from '../../tracing';
import { answeredTry, failedTry, openTry } from './traced-try';
import { hasRequestBody, UpstreamRequest } from './upstream-request';

/** One request on its way to a remote upstream, tried once or more. */
class Exchange extends UpstreamRequest implements Delivery, TimedExchange, RetriedExchange {
  readonly timers: ExchangeTimers;
  private readonly retrying: Retrying;
  private upload: UploadWatch | null = null;
  /** The try under way. */
  private abort: UpstreamCall | null = null;
  /** The endpoint of the try under way. */
  private endpoint: Endpoint | null = null;
  /** The span of the try under way, when the request is traced. */
  private trySpan: ChildSpan | null = null;
  private waiting: Waiting | null = null;
  stalled = false;
  gone = false;
  private answered = false;
  readonly gapMs: number;

  constructor(ctx: Context, upstream: RouteUpstream, options: ForwardOptions, hasBody: boolean) {
    super(ctx, upstream, options, hasBody);
    this.timers = new ExchangeTimers(options.timeoutMs, upstream, this);
    this.retrying = new Retrying(this);
    this.gapMs = shorter(options.timeoutMs, upstream.idleTimeoutMs);
  }

  get finishAtEnd(): boolean {
    return this.upstream.cluster.counts;
  }

  /** The client left: the try under way, or the wait for a place, ends. */
  readonly onClose = (): void => {
    if (this.ctx.res.writableFinished) return;
    this.gone = true;
    this.abort?.abort();
    this.waiting?.cancel(HttpError.of('CLIENT_LEFT'));
  };

  /** `timeout_ms` passed: whatever is under way ends, and nothing is tried again. */
  expire(): void {
    this.abort?.abort();
    this.waiting?.cancel(this.timeout());
  }

  expireTry(): void {
    this.abort?.abort();
  }

  clientLeft(): boolean {
    return this.abort!.aborted && !this.timers.timedOut;
  }

  /** Sends the request, tried as the route says, and hands the answer to `ctx`. */
  run(): Promise<void> {
    const { ctx, req, upstream } = this;
    ctx.res.once('close', this.onClose);
    if (this.bodyDone) this.timers.startOverall();
    else {
      this.upload = new UploadWatch(
        req,
        upstream.idleTimeoutMs,
        () => this.uploaded(),
        () => {
          this.stalled = true;
          this.abort?.abort();
        },
      );
    }
    if (this.body === req && this.retrying.left > 0) return this.keepBodyThenTry();
    // Straight to the tries, which clean up after themselves: no async step of its own on every forward.
    return this.sendTries();
  }

  /** The tries, the client's body kept attached to its socket when it is what they stream. */
  private sendTries(): Promise<void> {
    if (this.body === this.req) keepSocket(this.req);
    return this.tries();
  }

  private async keepBodyThenTry(): Promise<void> {
    try {
      await this.keepBody();
    } catch (err) {
      this.settle();
      throw err;
    }
    await this.sendTries();
  }

  /** The exchange is over, answered or failed: its timers, its upload watch and its retry place go. */
  private settle(): void {
    this.answered = true;
    this.timers.stop();
    this.upload?.stop();
    this.retrying.release();
  }

  // The loop of tries holds only what each try needs: the rare paths (a name
  // to resolve, a failed try, a status tried again) and the closures of a
  // streamed answer are methods of their own, so that the async frame every
  // forward makes stays small and no context is made for them.
  private async tries(): Promise<void> {
    const cluster = this.upstream.cluster;
    try {
      for (let tries = 0; ; tries++) {
        // Picked at once, but for names not resolved yet; a place is waited for only under the breakers.
        let endpoint = cluster.pick(this.hash.key);
        if (endpoint === undefined) endpoint = await this.resolvedPick();
        this.endpoint = endpoint;
        if (cluster.gated) await this.admit();
        const attempt = this.startTry(endpoint, tries);
        let answer: UpstreamAnswer;
        try {
          answer = await attempt.answer;
        } catch (err) {
          if (this.trySpan !== null) failedTry(this.trySpan, err, this.timers);
          this.trySpan = null;
          await this.retrying.failed(err, attempt, endpoint, tries);
          continue;
        }
        if (this.retrying.may(tries, this.retrying.statusRetried)) {
          await this.retryStatus(answer, tries);
          continue;
        }
        // At once: settle() below ends the timers and the upload watch.
        deliverTry(this.ctx, answer, attempt, endpoint, this.trySpan, this);
        return;
      }
    } finally {
      this.settle();
    }
  }

  /** The endpoint of a name not resolved yet, once it is. */
  private resolvedPick(): Promise<Endpoint> {
    return this.upstream.cluster.resolvedPick(this.hash.key, () => this.report('refused'));
  }

  /** Sends try number `tries` (0 for the first) to `endpoint`. */
  private startTry(endpoint: Endpoint, tries: number): UpstreamCall {
    if (this.upstream.cluster.counts) endpoint.active++;
    this.timers.tryTimedOut = null;
    const trace = this.options.trace;
    if (trace != null)
      this.trySpan = openTry(trace, this.req.method!, this.upstream, endpoint, this.options.path, tries, this.headers);
    if (this.bodyDone) this.timers.startTry();
    return (this.abort = call(endpoint.pool, this.dispatchOptions(), this.req.method!, this, this.gapMs));
  }

  /** An answer whose status is tried again: read to its end, the connection stays usable for the next request. */
  private async retryStatus(answer: UpstreamAnswer, tries: number): Promise<void> {
    this.trySpan?.end();
    this.trySpan = null;
    await discard(answer.body);
    this.finish();
    await this.retrying.backoff(tries + 1);
  }

  /**
   * The answer's headers came: the endpoint's outcome is known, the wait for
   * them is over, and so is the request's own, unless this status is to be
   * tried again. A small body that came with them is read whole before the
   * try ends; any other streams.
   */
  headersCame(status: number, headers: IncomingHttpHeaders): void {
    this.timers.stopTry();
    if (this.trySpan !== null) answeredTry(this.trySpan, status);
    const { cluster, retry } = this.upstream;
    // A failure at once; a success once the answer is whole (see settledOutcome): its body may still fail.
    if (status >= 500) cluster.outcome(this.endpoint!, true);
    const retried = retry !== null && retriesStatus(retry, status, headers['x-envoy-overloaded'] !== undefined);
    this.retrying.statusRetried = retried;
    if (!retried) this.timers.stopOverall();
  }

  /** Reads the body whole to send it again on a retry; past the bound it streams, and is not retried. */
  private async keepBody(): Promise<void> {
    let kept: Buffer | null;
    try {
      kept = await bodyForRetries(this.req, this.options.retryBufferBytes ?? DEFAULT_RETRY_BUFFER_BYTES);
    } catch (err) {
      if (this.stalled) throw this.stall();
      throw err;
    }
    if (kept === null) this.retrying.left = 0;
    else this.body = kept;
  }

  /** Takes a place under the circuit breakers of a gated cluster, waiting for one while every connection is busy. */
  private async admit(): Promise<void> {
    const cluster = this.upstream.cluster;
    const waiting = cluster.breakers[this.upstream.priority].acquire();
    if (waiting === null) return;
    this.waiting = waiting;
    try {
      await waiting.ready;
    } finally {
      this.waiting = null;
    }
  }

  /** Gives up what the try under way took: its place under the breakers, its count on the endpoint. */
  finish(): void {
    const cluster = this.upstream.cluster;
    if (cluster.gated) cluster.breakers[this.upstream.priority].release();
    if (cluster.counts) this.endpoint!.active--;
  }

  /** The upload ended: the timers count from now. */
  private uploaded(): void {
    this.bodyDone = true;
    if (this.answered) return;
    this.timers.startOverall();
    if (this.abort !== null) this.timers.startTry();
  }

  /** A streamed answer the upstream cut short after its headers: a failure of the endpoint, counted and told as one. */
  brokeOff(err: Error): void {
    this.report(failureOf(err));
    if (this.endpoint !== null) this.upstream.cluster.outcome(this.endpoint, true);
    markCutShort(this.ctx.res, 'upstream');
  }

  report(failure: UpstreamFailure): void {
    this.options.events?.upstreamError?.(this.options.route ?? '', failure);
  }

  timeout(cause?: unknown): HttpError {
    return HttpError.of('UPSTREAM_TIMEOUT', { timeoutMs: this.options.timeoutMs }, { cause });
  }

  stall(): HttpError {
    return HttpError.of('BODY_STALLED', { idleTimeoutMs: this.upstream.idleTimeoutMs });
  }
}

/**
 * Sends the request to the route's upstream cluster and streams its answer
 * back through `ctx`. Throws an {@link HttpError} (408, 413, 502, 503, 504)
 * when there is no answer to stream.
 */
export function forwardRemote(ctx: Context, upstream: RouteUpstream, options: ForwardOptions): Promise<void> {
  return new Exchange(ctx, upstream, options, hasRequestBody(ctx.req, options)).run();
}
