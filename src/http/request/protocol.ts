/**
 * @module http/request/protocol
 * The protocol a request came over, as Envoy's `%PROTOCOL%` writes it, for
 * the access log, the metrics and header values.
 */

/** The protocols a request comes over. */
export type RequestProtocol = 'HTTP/1.0' | 'HTTP/1.1' | 'HTTP/2';

/** The protocol of a request, from its version; one of three constant strings, nothing made. */
export function protocolOf(req: {
  readonly httpVersionMajor: number;
  readonly httpVersionMinor: number;
}): RequestProtocol {
  if (req.httpVersionMajor === 2) return 'HTTP/2';
  return req.httpVersionMajor === 1 && req.httpVersionMinor === 0 ? 'HTTP/1.0' : 'HTTP/1.1';
}
