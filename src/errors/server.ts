/**
 * @module errors/server
 * The errors the HTTP server answers itself, outside the app
 * (src/gatehouse/serving): requests Node could not parse or read, CONNECT,
 * expectations, and what a request must have before the app may have it.
 */
import { defineErrors } from './define';

export const SERVER_ERRORS = defineErrors({
  REQUEST_MALFORMED: { status: 400, about: 'a request line or header Node could not parse' },
  HEADERS_TOO_LARGE: { status: 431, about: "headers over Node's limit" },
  HEADERS_TIMEOUT: { status: 408, about: 'headers too slow to come' },
  BODY_MALFORMED: {
    status: 400,
    detail: 'the request body is malformed: {reason}',
    about: "`reason` is the parser's: a bad chunk size, a bare LF...",
  },
  BODY_TIMEOUT: { status: 408, detail: 'the request body did not arrive in time' },
  TRAILERS_TOO_LARGE: { status: 431, detail: 'the request trailers are larger than the server allows' },
  HOST_MISSING: { status: 400, detail: 'an HTTP/1.1 request must have a Host header' },
  AUTHORITY_MISMATCH: { status: 400, detail: 'the Host header names another authority than :authority' },
  EXPECTATION_UNSUPPORTED: { status: 417, detail: 'the only expectation the gateway meets is 100-continue' },
  CONNECT_NOT_SUPPORTED: { status: 501, detail: 'CONNECT is not supported: the gateway does not tunnel' },
  SHUTTING_DOWN: { status: 503, detail: 'the gateway is shutting down: connect again', about: 'a protocol upgrade' },
});
