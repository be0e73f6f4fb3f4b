/**
 * @module http/transfer-coding
 * Transfer codings (RFC 9112 §6.1, §7): chunked is the only one Node decodes,
 * and so the only one a body may be passed on in. A body in another coding
 * (`gzip, chunked`) comes out of Node's parser still coded, and, once the
 * hop-by-hop `Transfer-Encoding` is dropped, would be read by the next hop
 * as plain bytes.
 */

/** The detail of the 501 a request body in another coding is answered with (RFC 9112 §6.1). */
export const OTHER_TRANSFER_CODING = 'the request body is in a transfer coding other than chunked, which the gateway does not decode';

/** Whether a `Transfer-Encoding` value names a coding other than chunked. No allocation for the usual values. */
export function hasOtherTransferCoding(value: string | undefined): boolean {
  if (value === undefined || value === 'chunked') return false;
  return value.trim().toLowerCase() !== 'chunked';
}
