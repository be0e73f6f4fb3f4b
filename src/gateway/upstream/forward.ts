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
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { Dispatcher } from 'undici';
import { hasOtherTransferCoding, httpError, HttpError } from '../../http';
import { payloadTooLarge } from '../body-limit';
import { Abort, copyResponseHeaders, failureOf, ignore, keepSocket, smallBody, upstreamFailure, upstreamRequestHeaders, type ForwardOptions } from '../proxy';
import type { Waiting } from './breaker';
import type { RouteUpstream } from './clusters';
import type { Endpoint } from './endpoint';
import { requestKey, type RequestKey } from './hash-key';
import { DEFAULT_RETRY_BUFFER_BYTES, readReplayable } from './replay';
import { backoffMs, retriesFailure, retriesStatus, type TryFailure } from './retry';

const NONE: readonly string[] = [];
const NO_KEY: RequestKey = { key: undefined };

/** Whether a try failed to connect (the request never reached the upstream), or later. */
function tryFailureOf(err: unknown): TryFailure {
  const failure = failureOf(err);
  return failure === 'refused' ? 'connect' : 'reset';
}

/** The shorter of two limits, 0 standing for none. */
function shorter(a: number, b: number): number {
  return a === 0 ? b : b === 0 ? a : Math.min(a, b);
}

/** The host of a `host[:port]`, for TLS to present; undefined for an IP address, which TLS does not present. */
function tlsName(host: string): string | undefined {
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:[0-9]*$/, '');
  return isIP(name) === 0 ? name : undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** One request on its way to a remote upstream, tried once or more. */
class Exchange {
  private readonly req: IncomingMessage;
  /** What each try sends: nothing, the client's stream (one try only), or the body read whole. */
  private body: Buffer | IncomingMessage | null;
  /** Tries after the first that may be made: none once the body streamed. */
  private retries: number;
  /** Whether the request body has been received whole: the timers count from then. */
  private bodyDone: boolean;
  private abort: Abort | null = null;
  private timer: NodeJS.Timeout | undefined;
  private tryTimer: NodeJS.Timeout | undefined;
  private waiting: Waiting | null = null;
  private timedOut = false;
  private tryTimedOut: 'per-try' | 'idle' | null = null;
  private stalled = false;
  private gone = false;
  private answered = false;
  private holdsRetry = false;
  private readonly tryLimit: number;
  private readonly headers: Record<string, string | string[]>;
  private readonly hash: RequestKey;
  /** The name TLS presents: `host_rewrite`'s, else the service's; none for an IP address. */
  private readonly servername: string | undefined;

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
    this.headers = upstreamRequestHeaders(ctx, upstream.address.host, options.removedHeaders ?? NONE, options.hostRewrite);
    const on = upstream.cluster.settings.hashOn;
    this.hash = on === null ? NO_KEY : requestKey(ctx, on);
    this.servername = upstream.address.secure ? tlsName(options.hostRewrite ?? upstream.address.host) : undefined;
  }

  /** The client left: the try under way, or the wait for a place, ends. */
  private readonly onClose = (): void => {
    if (this.ctx.res.writableFinished) return;
    this.gone = true;
    this.abort?.abort();
    this.waiting?.cancel(new HttpError(502, 'the client left'));
  };

  /** `timeout_ms` passed: whatever is under way ends, and nothing is tried again. */
  private readonly onExpire = (): void => {
    this.timedOut = true;
    this.abort?.abort();
    this.waiting?.cancel(this.timeout());
  };

  private readonly onTryExpire = (): void => {
    this.tryTimedOut = this.upstream.retry !== null && this.tryLimit === this.upstream.retry.perTryTimeoutMs ? 'per-try' : 'idle';
    this.abort?.abort();
  };

  private readonly onBodyEnd = (): void => {
    this.bodyDone = true;
    this.stopStallWatch();
    if (this.answered) return;
    this.armOverall();
    if (this.abort !== null) this.armTry();
  };

  /** The client's upload was silent for `idle_timeout_ms`. */
  private readonly onStall = (): void => {
    this.stalled = true;
    this.abort?.abort();
    // Its reader (undici, or the read for a retry) stops; the socket stays for the 408.
    keepSocket(this.req);
    (this.req as { socket: unknown }).socket = null;
    this.req.destroy();
  };

  async run(): Promise<void> {
    const { ctx, req, upstream } = this;
    ctx.res.once('close', this.onClose);
    if (this.bodyDone) this.armOverall();
    else {
      req.once('end', this.onBodyEnd);
      if (upstream.idleTimeoutMs > 0) req.setTimeout(upstream.idleTimeoutMs, this.onStall);
    }
    try {
      if (this.body === req && this.retries > 0) await this.keepBody();
      if (this.body === req) keepSocket(req);
      await this.tries();
    } finally {
      this.answered = true;
      clearTimeout(this.timer);
      clearTimeout(this.tryTimer);
      if (!this.bodyDone) req.off('end', this.onBodyEnd);
      this.stopStallWatch();
      if (this.holdsRetry) upstream.cluster.breakers[upstream.priority].endRetry();
    }
  }

  private async tries(): Promise<void> {
    const { upstream, options } = this;
    const { cluster, retry } = upstream;
    for (let tries = 0; ; tries++) {
      const endpoint = await this.endpoint();
      await this.admit();
      if (cluster.counts) endpoint.active++;
      const abort = (this.abort = new Abort());
      this.tryTimedOut = null;
      if (this.bodyDone) this.armTry();
      let response: Dispatcher.ResponseData;
      try {
        response = await endpoint.pool.request({
          method: this.ctx.method as Dispatcher.HttpMethod,
          path: options.path,
          headers: this.headers,
          body: this.body,
          // The timers of this exchange stand for undici's headers timeout, which would run from the start of the upload.
          headersTimeout: 0,
          bodyTimeout: shorter(options.timeoutMs, upstream.idleTimeoutMs),
          signal: abort,
          // Known to undici's requests, missing from its types.
          servername: this.servername,
        } as Dispatcher.RequestOptions);
      } catch (err) {
        clearTimeout(this.tryTimer);
        this.finish(endpoint);
        const failure = this.failure(err, abort, endpoint);
        if (this.mayRetry(tries, retry !== null && retriesFailure(retry, failure))) {
          await this.backoff(tries + 1);
          continue;
        }
        this.report(failure === 'per-try-timeout' ? 'timeout' : failureOf(err));
        if (failure === 'per-try-timeout') throw new HttpError(504, `the upstream service did not answer within per_try_timeout (${retry!.perTryTimeoutMs} ms)`, { cause: err });
        throw upstreamFailure(failureOf(err), err, options.timeoutMs);
      }
      clearTimeout(this.tryTimer);
      const status = response.statusCode;
      if (status >= 500 || endpoint.failures !== 0) cluster.outcome(endpoint, status >= 500);
      if (retry !== null && this.mayRetry(tries, retriesStatus(retry, status, response.headers['x-envoy-overloaded'] !== undefined))) {
        // Read to its end, the connection stays usable for the next request.
        await response.body.dump().catch(ignore);
        this.finish(endpoint);
        await this.backoff(tries + 1);
        continue;
      }
      this.answered = true;
      clearTimeout(this.timer);
      return this.deliver(response, endpoint);
    }
  }

  /**
   * What a try that got no answer failed of; throws the final answer when it
   * is no failure of the upstream's (the body limit, a stalled upload, a
   * client that left) or may not be retried (`timeout_ms`, `idle_timeout_ms`).
   */
  private failure(err: unknown, abort: Abort, endpoint: Endpoint): TryFailure {
    const { options, upstream } = this;
    if (options.guard?.tripped) throw payloadTooLarge(options.guard.limit);
    if (this.stalled) throw this.stall();
    if (this.timedOut) {
      this.upstream.cluster.outcome(endpoint, true);
      this.report('timeout');
      throw this.timeout(err);
    }
    // A client that left is no failure of the upstream's.
    if (abort.aborted && this.tryTimedOut === null) throw upstreamFailure(failureOf(err), err, options.timeoutMs);
    upstream.cluster.outcome(endpoint, true);
    if (this.tryTimedOut === 'idle') {
      this.report('timeout');
      throw new HttpError(504, `the upstream service was silent for idle_timeout_ms (${upstream.idleTimeoutMs} ms)`, { cause: err });
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
    await sleep(backoffMs(this.upstream.retry!, retry));
    if (this.timedOut) {
      this.report('timeout');
      throw this.timeout();
    }
    if (this.gone) throw new HttpError(502, 'the client left');
  }

  /** Reads the body whole to send it again on a retry; past the bound it streams, and is not retried. */
  private async keepBody(): Promise<void> {
    const { options } = this;
    let whole: Buffer | null;
    try {
      whole = await readReplayable(this.req, options.retryBufferBytes ?? DEFAULT_RETRY_BUFFER_BYTES);
    } catch (err) {
      if (options.guard?.tripped) throw payloadTooLarge(options.guard.limit);
      if (this.stalled) throw this.stall();
      throw new HttpError(400, 'the request body was cut short', { cause: err });
    }
    // What went out cannot be sent twice.
    if (whole === null) this.retries = 0;
    else this.body = whole;
  }

  /** An endpoint to send the try to, once the cluster's names have resolved. */
  private async endpoint(): Promise<Endpoint> {
    const cluster = this.upstream.cluster;
    const picked = cluster.pick(this.hash.key);
    if (picked !== undefined) return picked;
    try {
      await cluster.ready();
    } catch (err) {
      this.report('refused');
      throw new HttpError(503, "the upstream service is unavailable: its name does not resolve", { cause: err });
    }
    const resolved = cluster.pick(this.hash.key);
    if (resolved === undefined) throw new HttpError(503, 'the upstream service is unavailable: it has no address');
    return resolved;
  }

  /** Takes a place under the circuit breakers, waiting for one while every connection is busy. */
  private async admit(): Promise<void> {
    const cluster = this.upstream.cluster;
    if (!cluster.gated) return;
    const waiting = cluster.breakers[this.upstream.priority].acquire();
    if (waiting === null) return;
    this.waiting = waiting;
    try {
      await waiting.ready;
    } finally {
      this.waiting = null;
    }
  }

  /** Gives up what a try took: its place under the breakers, its count on the endpoint. */
  private finish(endpoint: Endpoint): void {
    const cluster = this.upstream.cluster;
    if (cluster.gated) cluster.breakers[this.upstream.priority].release();
    if (cluster.counts) endpoint.active--;
  }

  /** Streams the answer back through `ctx` (or reads a small one whole). */
  private async deliver(response: Dispatcher.ResponseData, endpoint: Endpoint): Promise<void> {
    const { ctx, options } = this;
    const { statusCode, headers, body } = response;
    if (hasOtherTransferCoding(headers['transfer-encoding'] as string | undefined)) {
      // undici took the chunks off and left the other coding on: passed on
      // without its Transfer-Encoding, the body would be read as plain bytes.
      ctx.res.off('close', this.onClose);
      body.on('error', ignore).destroy();
      this.finish(endpoint);
      this.report('other');
      throw new HttpError(502, 'the upstream service answered in a transfer coding other than chunked');
    }
    let payload: Buffer | Dispatcher.ResponseData['body'] = body;
    if (smallBody(ctx.method, statusCode, headers)) {
      try {
        payload = Buffer.from(await body.arrayBuffer());
      } catch (err) {
        // Nothing is sent yet: a body cut short or too slow is still answered with the error body.
        if (this.abort!.aborted && !this.timedOut) throw err;
        const failure = failureOf(err);
        this.report(failure);
        throw upstreamFailure(failure, err, shorter(options.timeoutMs, this.upstream.idleTimeoutMs));
      } finally {
        ctx.res.off('close', this.onClose);
        this.finish(endpoint);
      }
    } else {
      // koa destroys an unread body (HEAD, 204, 304) once the response is sent; that is no error.
      body.on('error', ignore);
      if (this.upstream.cluster.counts) body.once('close', () => this.finish(endpoint));
    }
    ctx.status = statusCode;
    copyResponseHeaders(ctx, headers);
    if (this.hash.setCookie !== undefined) ctx.append('Set-Cookie', this.hash.setCookie);
    const typed = headers['content-type'] !== undefined;
    ctx.body = payload;
    // koa names a stream `application/octet-stream` when nothing else did; the upstream's word stands.
    if (!typed) ctx.remove('Content-Type');
  }

  private armOverall(): void {
    if (this.options.timeoutMs > 0 && this.timer === undefined) this.timer = setTimeout(this.onExpire, this.options.timeoutMs);
  }

  private armTry(): void {
    if (this.tryLimit > 0) this.tryTimer = setTimeout(this.onTryExpire, this.tryLimit);
  }

  private stopStallWatch(): void {
    if (this.upstream.idleTimeoutMs === 0) return;
    this.req.off('timeout', this.onStall);
    this.req.socket?.setTimeout(0);
  }

  private report(failure: 'timeout' | 'refused' | 'other'): void {
    this.options.events?.upstreamError?.(this.options.route ?? '', failure);
  }

  private timeout(cause?: unknown): HttpError {
    return new HttpError(504, `the upstream service did not answer within ${this.options.timeoutMs} ms`, { cause });
  }

  private stall(): HttpError {
    return httpError('REQUEST_TIMEOUT', `the request body stalled: nothing came for idle_timeout_ms (${this.upstream.idleTimeoutMs} ms)`, {
      headers: { Connection: 'close' },
    });
  }
}

/**
 * Sends the request to the route's upstream cluster and streams its answer
 * back through `ctx`. Throws an {@link HttpError} (408, 413, 502, 503, 504)
 * when there is no answer to stream.
 */
export function forwardRemote(ctx: Context, upstream: RouteUpstream, options: ForwardOptions): Promise<void> {
  const req = ctx.req;
  const hasBody = options.guard !== null || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
  return new Exchange(ctx, upstream, options, hasBody).run();
}
