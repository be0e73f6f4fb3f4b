/**
 * @module gateway/request/body-limit
 * The request body limit (413), for bodies of every length.
 *
 * A declared `Content-Length` is checked before anything else happens. A body
 * of unknown length (chunked, or HTTP/2 DATA frames without a length) is
 * counted as it arrives, whoever reads it: an
 * upstream request streaming it or an in-process module reading it with
 * `readJson`. The count sits where Node's HTTP parser hands the request its
 * data (`push`), so no reader can see more than the limit. Past the limit the
 * request stream fails with a 413 error, the rest of the body is read and
 * dropped so that the connection stays usable, and the gateway answers 413.
 */
import type { IncomingMessage } from 'node:http';
import { failRequestBody, HttpError } from '../../http';
import { watchBodyAsParsed } from '../../platform';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** The 413 answer. */
export function payloadTooLarge(limit: number): HttpError {
  return HttpError.of('BODY_TOO_LARGE', { limit });
}

/** Whether the request declares a `Content-Length` larger than `limit`: a 413 before anything else happens. */
export function declaredTooLarge(req: IncomingMessage, limit: number): boolean {
  const declared = req.headers['content-length'];
  return declared !== undefined && Number(declared) > limit;
}

/** Counts a body of unknown length as it arrives. */
export class StreamedBodyGuard {
  /** Bytes seen so far. */
  seen = 0;
  /** Whether the body went past the limit. */
  tripped = false;

  constructor(readonly limit: number) {}

  /** Fails the request stream: its reader, if any, gets the 413 error. */
  trip(req: IncomingMessage): void {
    this.tripped = true;
    failRequestBody(req, payloadTooLarge(this.limit));
  }
}

/** Starts counting the body of `req` against `limit`. */
export function guardStreamedBody(req: IncomingMessage, limit: number): StreamedBodyGuard {
  const guard = new StreamedBodyGuard(limit);
  watchBodyAsParsed(req, (request, chunk) => {
    // Past the limit nothing more reaches a reader, the end of the body included: the stream has failed.
    if (guard.tripped) return false;
    if (chunk === null) return true;
    guard.seen += chunk.length;
    if (guard.seen <= limit) return true;
    guard.trip(request);
    return false;
  });
  return guard;
}
