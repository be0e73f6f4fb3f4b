/**
 * @module gateway/upstream/forward
 * Forwarding one request to a remote upstream with undici: an endpoint of its
 * cluster picked by the balancer, a place taken under the circuit breakers,
 * the request sent (its body streamed, or kept to be sent again when the
 * route retries), tried again as `retry_policy` says after Envoy's jittered
 * back-off, and the answer streamed back through `ctx`.
 *
 * Timers, as Envoy's: `timeout_ms` counts from the end of the request body
 * and bounds every try together (504, never retried); `per_try_timeout`
 * bounds each try's wait for its answer's headers (504, or another try);
 * `idle_timeout_ms` bounds each silence, the client's upload (408) as much as
 * the upstream's answer (504).
 */
import type { Context } from 'koa';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Dispatcher } from 'undici';
import { bodyFailure, HttpError, markCutShort } from '../../http';
import { peekBody, type PeekedBody } from '../stages/auth-body';
import type { UpstreamFailure } from '../events';
import { upstreamRequestHeaders } from './headers';
import { deliverAnswer, type Delivery } from './deliver';
import { failureOf, tryFailureOf, upstreamFailure } from './failures';
import { AnswerBodyError, call, discard, type UpstreamAnswer, type UpstreamCall } from './call';
import type { Waiting } from './endpoints/breaker';
import type { RouteUpstream } from './endpoints/clusters';
import type { Endpoint } from './endpoints/endpoint';
import { requestKey, type RequestKey } from './endpoints/hash-key';
import type { ForwardOptions } from './types';
import { DEFAULT_RETRY_BUFFER_BYTES, keepSocket, UploadWatch } from './upload';
import { backoffMs, retriesFailure, retriesStatus, type TryFailure } from './retry';
import { tlsName } from './service';
import type { ChildSpan } from '../../tracing';
import { answeredTry, failedTry, openTry } from './traced-try';

/** The shorter of two limits, 0 standing for none. */
function shorter(a: number, b: number): number {
  return a === 0 ? b : b === 0 ? a : Math.min(a, b);
}

const NONE: readonly string[] = [];
const NO_KEY: RequestKey = { key: undefined };

// Timer callbacks that take their exchange as argument: no closure per request.
const expire = (x: Exchange): void => x.expire();
const expireTry = (x: Exchange): void => x.expireTry();

/** One request on its way to a remote upstream, tried once or more. */
class Exchange implements Delivery {
  private readonly req: IncomingMessage;
  /** What each try sends: nothing, the client's stream (one try only), or the body read whole. */
  private body: Buffer | IncomingMessage | null;
  /** Tries after the first that may be made: none once the body streamed. */
  private retries: number;
  /** Whether the request body has been received whole: the timers count from then. */
  private bodyDone: boolean;
  private upload: UploadWatch | null = null;
  /** The try under way. */
  private abort: UpstreamCall | null = null;
  /** The endpoint of the try under way. */
  private endpoint: Endpoint | null = null;
  /** The span of the try under way, when the request is traced. */
  private trySpan: ChildSpan | null = null;
  private timer: NodeJS.Timeout | undefined;
  private tryTimer: NodeJS.Timeout | undefined;
  private waiting: Waiting | null = null;
  private timedOut = false;
  private tryTimedOut: 'per-try' | 'idle' | null = null;
  private stalled = false;
  private gone = false;
  private answered = false;
  private holdsRetry = false;
  /** Whether the retry policy tries the status of the last answer again. */
  private statusRetried = false;
  private readonly tryLimit: number;
  private readonly headers: Record<string, string | string[]>;
  private readonly hash: RequestKey;
  /** The name TLS presents: `host_rewrite`'s, else the service's; none for an IP address. */
  private readonly servername: string | undefined;
  readonly gapMs: number;

  constructor(
    private readonly ctx: Context,
    private readonly upstream: RouteUpstream,
    private readonly options: ForwardOptions,
    hasBody: boolean,
  ) {
    const req = (this.req = ctx.req);
    this.body = hasBody ? req : null;
    this.bodyDone = !hasBody || req.readableEnded;
    this.retries = upstream.retry?.numRetries ?? 0;
    this.tryLimit = shorter(upstream.retry?.perTryTimeoutMs ?? 0, upstream.idleTimeoutMs);
    this.gapMs = shorter(options.timeoutMs, upstream.idleTimeoutMs);
    this.headers = upstreamRequestHeaders(
      ctx,
      upstream.address.host,
      options.removedHeaders ?? NONE,
      options.hostRewrite,
    );
    const on = upstream.cluster.settings.hashOn;
    this.hash = on === null ? NO_KEY : requestKey(ctx, on);
    this.servername = upstream.address.secure ? tlsName(options.hostRewrite ?? upstream.address.host) : undefined;
  }

  get setCookie(): string | undefined {
    return this.hash.setCookie;
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
    this.timedOut = true;
    this.abort?.abort();
    this.waiting?.cancel(this.timeout());
  }

  expireTry(): void {
    this.tryTimedOut =
      this.upstream.retry !== null && this.tryLimit === this.upstream.retry.perTryTimeoutMs ? 'per-try' : 'idle';
    this.abort?.abort();
  }

  clientLeft(): boolean {
    return this.abort!.aborted && !this.timedOut;
  }

  /** Sends the request, tried as the route says, and hands the answer to `ctx`. */
  run(): Promise<void> {
    const { ctx, req, upstream } = this;
    ctx.res.once('close', this.onClose);
    if (this.bodyDone) this.armOverall();
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
    if (this.body === req && this.retries > 0) return this.keepBodyThenTry();
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
    clearTimeout(this.timer);
    clearTimeout(this.tryTimer);
    this.upload?.stop();
    if (this.holdsRetry) this.upstream.cluster.breakers[this.upstream.priority].endRetry();
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
          if (this.trySpan !== null) this.tryFailed(err);
          await this.failedTry(err, attempt, endpoint, tries);
          continue;
        }
        if (this.mayRetry(tries, this.statusRetried)) {
          await this.retryStatus(answer, tries);
          continue;
        }
        this.deliver(answer, attempt, endpoint);
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
    this.tryTimedOut = null;
    const trace = this.options.trace;
    if (trace != null)
      this.trySpan = openTry(trace, this.req.method!, this.upstream, endpoint, this.options.path, tries, this.headers);
    if (this.bodyDone) this.armTry();
    return (this.abort = call(
      endpoint.pool,
      {
        method: this.req.method as Dispatcher.HttpMethod,
        path: this.options.path,
        headers: this.headers,
        body: this.body,
        // The timers of this exchange stand for undici's headers timeout, which would run from the start of the upload,
        // and the call watches the body's gaps (see ./call).
        headersTimeout: 0,
        bodyTimeout: 0,
        // Known to undici's requests, missing from its types.
        servername: this.servername,
      } as Dispatcher.DispatchOptions,
      this.req.method!,
      this,
      this.gapMs,
    ));
  }

  /** A try that got no answer: returns once the next try may go, or throws the request's answer. */
  private async failedTry(err: unknown, attempt: UpstreamCall, endpoint: Endpoint, tries: number): Promise<void> {
    const { options, upstream } = this;
    const retry = upstream.retry;
    clearTimeout(this.tryTimer);
    if (err instanceof AnswerBodyError) {
      // The headers came (see headersCame), then a small body failed in the same read, before it was read whole.
      this.finish();
      if (this.mayRetry(tries, this.statusRetried)) return this.backoff(tries + 1);
      this.ctx.res.off('close', this.onClose);
      // Nothing is sent yet: a body broken where its headers are is still answered with the error body.
      if (this.clientLeft()) throw err.cause;
      const failure = failureOf(err.cause);
      this.report(failure);
      upstream.cluster.outcome(endpoint, true);
      throw upstreamFailure(failure, err.cause, this.gapMs);
    }
    this.finish();
    const failure = this.failure(err, attempt, endpoint);
    if (this.mayRetry(tries, retry !== null && retriesFailure(retry, failure))) return this.backoff(tries + 1);
    if (failure !== 'per-try-timeout') {
      this.report(failureOf(err));
      throw upstreamFailure(failureOf(err), err, options.timeoutMs);
    }
    this.report('timeout');
    throw HttpError.of('UPSTREAM_TRY_TIMEOUT', { perTryTimeoutMs: retry!.perTryTimeoutMs }, { cause: err });
  }

  /** Ends the span of a try that got no answer, saying why. */
  private tryFailed(err: unknown): void {
    const why =
      err instanceof AnswerBodyError ? 'body' : this.timedOut ? 'timeout' : (this.tryTimedOut ?? failureOf(err));
    failedTry(this.trySpan!, why === 'per-try' ? 'per-try-timeout' : why);
    this.trySpan = null;
  }

  /** An answer whose status is tried again: read to its end, the connection stays usable for the next request. */
  private async retryStatus(answer: UpstreamAnswer, tries: number): Promise<void> {
    this.trySpan?.end();
    this.trySpan = null;
    await discard(answer.body);
    this.finish();
    await this.backoff(tries + 1);
  }

  /** Hands the answer over at once: settle() in tries ends the timers and the upload watch. */
  private deliver(answer: UpstreamAnswer, attempt: UpstreamCall, endpoint: Endpoint): void {
    const span = this.trySpan;
    if (span !== null) {
      // The try lasts as long as its answer: a streamed one until it is read.
      if (Buffer.isBuffer(answer.body)) span.end();
      else answer.body.once('close', () => span.end());
    }
    if (Buffer.isBuffer(answer.body)) this.settledOutcome(endpoint, answer.statusCode);
    else {
      attempt.brokeOff = (err) => this.brokeOff(err);
      if (answer.statusCode < 500 && endpoint.failures !== 0)
        answer.body.once('end', () => this.settledOutcome(endpoint, answer.statusCode));
    }
    deliverAnswer(this.ctx, answer, this);
  }

  /**
   * The answer's headers came: the endpoint's outcome is known, the wait for
   * them is over, and so is the request's own, unless this status is to be
   * tried again. A small body that came with them is read whole before the
   * try ends; any other streams.
   */
  headersCame(status: number, headers: IncomingHttpHeaders): void {
    clearTimeout(this.tryTimer);
    if (this.trySpan !== null) answeredTry(this.trySpan, status);
    const { cluster, retry } = this.upstream;
    // A failure at once; a success once the answer is whole (see settledOutcome): its body may still fail.
    if (status >= 500) cluster.outcome(this.endpoint!, true);
    this.statusRetried = retry !== null && retriesStatus(retry, status, headers['x-envoy-overloaded'] !== undefined);
    if (!this.statusRetried) clearTimeout(this.timer);
  }

  /**
   * What a try that got no answer failed of; throws the final answer when it
   * is no failure of the upstream's (the body limit, a stalled upload, a
   * client that left) or may not be retried (`timeout_ms`, `idle_timeout_ms`).
   */
  private failure(err: unknown, abort: UpstreamCall, endpoint: Endpoint): TryFailure {
    const { options, upstream } = this;
    // A body that failed on its way (too long, malformed) is the client's fault, not the upstream's.
    const failed = bodyFailure(this.ctx.req);
    if (failed !== undefined) throw failed;
    if (this.stalled) throw this.stall();
    // A client that left is no failure of the upstream's.
    if (abort.aborted && !this.timedOut && this.tryTimedOut === null)
      throw upstreamFailure(failureOf(err), err, options.timeoutMs);
    upstream.cluster.outcome(endpoint, true);
    if (this.timedOut) {
      this.report('timeout');
      throw this.timeout(err);
    }
    if (this.tryTimedOut === 'idle') {
      this.report('timeout');
      throw HttpError.of('UPSTREAM_IDLE_TIMEOUT', { idleTimeoutMs: upstream.idleTimeoutMs }, { cause: err });
    }
    return this.tryTimedOut === 'per-try' ? 'per-try-timeout' : tryFailureOf(err);
  }

  /** Whether the try after try number `tries` (0 for the first) is made, when the policy `wants` it; takes its place under `max_retries`. */
  private mayRetry(tries: number, wants: boolean): boolean {
    if (!wants || tries >= this.retries || this.timedOut || this.gone) return false;
    const breaker = this.upstream.cluster.breakers[this.upstream.priority];
    if (this.holdsRetry) breaker.endRetry();
    this.holdsRetry = breaker.startRetry();
    if (this.holdsRetry) this.options.events?.upstreamRetry?.(this.options.route ?? '');
    return this.holdsRetry;
  }

  private async backoff(retry: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, backoffMs(this.upstream.retry!, retry)));
    if (this.timedOut) {
      this.report('timeout');
      throw this.timeout();
    }
    if (this.gone) throw HttpError.of('CLIENT_LEFT');
  }

  /**
   * Reads the body whole to send it again on a retry, as Envoy buffers it;
   * past the bound it streams, from its first byte, and is not retried: what
   * went out cannot be sent twice.
   */
  private async keepBody(): Promise<void> {
    const { options, req } = this;
    let peeked: PeekedBody;
    try {
      peeked = await peekBody(req, options.retryBufferBytes ?? DEFAULT_RETRY_BUFFER_BYTES);
    } catch (err) {
      if (this.stalled) throw this.stall();
      throw err;
    }
    if (peeked.cut) {
      this.retries = 0;
      return;
    }
    this.body = peeked.bytes;
    // What was put back is read out to the stream's end, from which the timers count.
    req.resume();
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
    this.armOverall();
    if (this.abort !== null) this.armTry();
  }

  private armOverall(): void {
    if (this.options.timeoutMs > 0 && this.timer === undefined)
      this.timer = setTimeout(expire, this.options.timeoutMs, this);
  }

  private armTry(): void {
    if (this.tryLimit > 0) this.tryTimer = setTimeout(expireTry, this.tryLimit, this);
  }

  /** An answer came whole: below 500, the endpoint's run of failures is over. */
  private settledOutcome(endpoint: Endpoint, status: number): void {
    if (status < 500 && endpoint.failures !== 0) this.upstream.cluster.outcome(endpoint, false);
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

  private timeout(cause?: unknown): HttpError {
    return HttpError.of('UPSTREAM_TIMEOUT', { timeoutMs: this.options.timeoutMs }, { cause });
  }

  private stall(): HttpError {
    return HttpError.of('BODY_STALLED', { idleTimeoutMs: this.upstream.idleTimeoutMs });
  }
}

/**
 * Sends the request to the route's upstream cluster and streams its answer
 * back through `ctx`. Throws an {@link HttpError} (408, 413, 502, 503, 504)
 * when there is no answer to stream.
 */
export function forwardRemote(ctx: Context, upstream: RouteUpstream, options: ForwardOptions): Promise<void> {
  const req = ctx.req;
  const hasBody =
    options.guard !== null || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
  return new Exchange(ctx, upstream, options, hasBody).run();
}
