/**
 * @module errors/upstream
 * The errors of forwarding to an upstream (src/gateway/upstream): one that
 * does not answer in time, cannot be reached, answers what cannot be passed
 * on, or whose circuit breaker is open.
 */
import { defineErrors } from './define';

export const UPSTREAM_ERRORS = defineErrors({
  UPSTREAM_TIMEOUT: { status: 504, detail: 'the upstream service did not answer within {timeoutMs} ms' },
  UPSTREAM_TRY_TIMEOUT: {
    status: 504,
    detail: 'the upstream service did not answer within per_try_timeout ({perTryTimeoutMs} ms)',
  },
  UPSTREAM_IDLE_TIMEOUT: {
    status: 504,
    detail: 'the upstream service was silent for idle_timeout_ms ({idleTimeoutMs} ms)',
  },
  UPSTREAM_UNAVAILABLE: { status: 503, detail: 'the upstream service is unavailable', about: 'connection refused' },
  UPSTREAM_UNRESOLVED: { status: 503, detail: 'the upstream service is unavailable: its name does not resolve' },
  UPSTREAM_NO_ADDRESS: { status: 503, detail: 'the upstream service is unavailable: it has no address' },
  UPSTREAM_OVERLOADED: {
    status: 503,
    detail: 'the upstream service is overloaded: its circuit breaker is open ({limit}: {value})',
    headers: { 'x-envoy-overloaded': 'true' },
  },
  GRPC_OVER_HTTP1: {
    status: 505,
    detail: 'a gRPC call needs HTTP/2: over HTTP/1.1 its status, sent in trailers, would not reach the client',
    about: 'gRPC-Web is taken over HTTP/1.1 where the Module enables it',
  },
  GRPC_WEB_TEXT_INVALID: {
    status: 400,
    detail: 'the gRPC-Web text body is not base64 in whole quartets',
  },
  UPSTREAM_FAILED: { status: 502, detail: 'the upstream service failed to answer' },
  UPSTREAM_CUT_SHORT: {
    status: 502,
    detail: 'the upstream service cut its answer short',
    about: 'the client is cut off when the answer had begun',
  },
  UPSTREAM_TRANSFER_CODING: {
    status: 502,
    detail: 'the upstream service answered in a transfer coding other than chunked',
  },
  CLIENT_LEFT: { status: 502, detail: 'the client left', about: 'logged only: nobody is left to answer' },
  BODY_STALLED: {
    status: 408,
    detail: 'the request body stalled: nothing came for idle_timeout_ms ({idleTimeoutMs} ms)',
    headers: { Connection: 'close' },
  },
});
