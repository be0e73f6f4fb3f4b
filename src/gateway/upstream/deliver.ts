/**
 * @module gateway/upstream/deliver
 * An upstream's answer handed to `ctx`: read whole, or streamed.
 */
import type { Context } from 'koa';
import { hasOtherTransferCoding, HttpError } from '../../http';
import type { UpstreamFailure } from '../events';
import { copyResponseHeaders } from './headers';
import type { UpstreamAnswer } from './call';

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
