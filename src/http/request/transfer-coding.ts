/**
 * @module http/request/transfer-coding
 * Transfer codings (RFC 9112 §6.1, §7): chunked is the only one Node decodes,
 * and so the only one a body may be passed on in. A body in another coding
 * (`gzip, chunked`) comes out of Node's parser still coded, and, once the
 * hop-by-hop `Transfer-Encoding` is dropped, would be read by the next hop
 * as plain bytes.
 */
import type { IncomingMessage } from 'node:http';
import { ERRORS, HttpError } from '../../errors';

/** The detail of the 501 a request body in another coding is answered with (RFC 9112 §6.1). */
export const OTHER_TRANSFER_CODING = ERRORS.TRANSFER_CODING_UNSUPPORTED.detail;

/** Whether a `Transfer-Encoding` value names a coding other than chunked. No allocation for the usual values. */
export function hasOtherTransferCoding(value: string | undefined): boolean {
  if (value === undefined || value === 'chunked') return false;
  return value.trim().toLowerCase() !== 'chunked';
}

/**
 * Why a request's `Transfer-Encoding` cannot be served, as the error to
 * answer it with (the connection is to close after it); undefined when it
 * can, or it has none.
 * - An HTTP/1.0 request with one: 400. HTTP/1.0 has no chunked coding, so
 *   RFC 9112 §6.1 holds its framing faulty: a proxy in front may have read
 *   no body there, and taken the chunks for the next request.
 * - A coding other than chunked: 501 (RFC 9112 §6.1).
 */
export function transferCodingRefusal(req: IncomingMessage): HttpError | undefined {
  const value = req.headers['transfer-encoding'];
  if (value === undefined) return undefined;
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 0) return HttpError.of('TRANSFER_ENCODING_IN_HTTP_1_0');
  return hasOtherTransferCoding(value) ? HttpError.of('TRANSFER_CODING_UNSUPPORTED') : undefined;
}
