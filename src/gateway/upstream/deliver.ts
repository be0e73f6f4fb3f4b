/**
 * @module gateway/upstream/deliver
 * An upstream's answer handed to `ctx`: read whole, or streamed; the span
 * of its try, and the outcome of the endpoint that gave it, end with it.
 */
import type { Context } from 'koa';
import { hasOtherTransferCoding, HttpError } from '../../http';
import type { UpstreamFailure } from '../events';
import { copyResponseHeaders } from './headers';
import type { ChildSpan } from '../../tracing';
import type { UpstreamAnswer, UpstreamCall } from './call';
import type { RouteUpstream } from './endpoints/clusters';
import type { Endpoint } from './endpoints/endpoint';

/** The error listener of a stream given up: what fails in it after that is no one's to answer. */
function ignore(): void {}

/** What delivering an answer needs of its exchange. */
export interface Delivery {
  /** The listener of the client leaving, which aborts the try: kept while the answer streams, removed once it is read whole. */
  readonly onClose: () => void;
  /** Gives up what the try took (its breaker place, its count on the endpoint). */
  finish(): void;
  /** Whether {@link finish} waits for the end of a streamed answer (the cluster counts requests in flight). */
  readonly finishAtEnd: boolean;
  report(failure: UpstreamFailure): void;
  /** A cookie to set for `ring_hash` / `maglev` (one was made for this request). */
  readonly setCookie: string | undefined;
  readonly upstream: RouteUpstream;
  /** A streamed answer the upstream cut short after its headers. */
  brokeOff(err: Error): void;
}

/** An answer came whole: below 500, the endpoint's run of failures is over. */
function settledOutcome(upstream: RouteUpstream, endpoint: Endpoint, status: number): void {
  if (status < 500 && endpoint.failures !== 0) upstream.cluster.outcome(endpoint, false);
}

/**
 * Hands over the answer `attempt` got from `endpoint` (see
 * {@link deliverAnswer}). The try's span lasts as long as its answer, a
 * streamed one until it is read; below 500 the endpoint's outcome is a
 * success once the answer is whole, and a streamed answer the upstream
 * breaks off is told to the exchange.
 */
export function deliverTry(
  ctx: Context,
  answer: UpstreamAnswer,
  attempt: UpstreamCall,
  endpoint: Endpoint,
  span: ChildSpan | null,
  d: Delivery,
): void {
  const body = answer.body;
  if (span !== null) {
    if (Buffer.isBuffer(body)) span.end();
    else body.once('close', () => span.end());
  }
  if (Buffer.isBuffer(body)) settledOutcome(d.upstream, endpoint, answer.statusCode);
  else {
    attempt.brokeOff = (err) => d.brokeOff(err);
    if (answer.statusCode < 500 && endpoint.failures !== 0)
      body.once('end', () => settledOutcome(d.upstream, endpoint, answer.statusCode));
  }
  deliverAnswer(ctx, answer, d);
}

/**
 * Hands the answer to `ctx`: a body read whole as it is, a streamed one to
 * stream on. Throws an {@link HttpError} (502) when it comes in a transfer
 * coding it cannot pass on.
 */
export function deliverAnswer(ctx: Context, answer: UpstreamAnswer, d: Delivery): void {
  const { statusCode, headers, body } = answer;
  const whole = Buffer.isBuffer(body);
  if (whole) {
    ctx.res.off('close', d.onClose);
    d.finish();
  }
  if (hasOtherTransferCoding(headers['transfer-encoding'])) {
    // undici took the chunks off and left the other coding on: passed on
    // without its Transfer-Encoding, the body would be read as plain bytes.
    if (!whole) {
      ctx.res.off('close', d.onClose);
      body.on('error', ignore).destroy();
      d.finish();
    }
    d.report('other');
    throw HttpError.of('UPSTREAM_TRANSFER_CODING');
  }
  if (!whole) {
    // koa destroys an unread body (HEAD, 204, 304) once the response is sent; that is no error.
    body.on('error', ignore);
    if (d.finishAtEnd) body.once('close', () => d.finish());
  }
  // Straight on the response: ctx's own setters only pass on to it.
  const response = ctx.response;
  response.status = statusCode;
  copyResponseHeaders(ctx, headers);
  if (d.setCookie !== undefined) ctx.append('Set-Cookie', d.setCookie);
  const typed = headers['content-type'] !== undefined;
  response.body = body;
  // koa names a stream `application/octet-stream` when nothing else did; the upstream's word stands.
  if (!typed) ctx.remove('Content-Type');
}
