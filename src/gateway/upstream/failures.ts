/**
 * @module gateway/upstream/failures
 * How a remote upstream failed, read off undici's error, and what the
 * client is answered for it: 504 past `timeout_ms`, 503 when the upstream
 * cannot be reached, 502 for anything else it does wrong. A try that failed
 * to connect never reached the upstream, which a retry policy tells apart.
 */
import { HttpError } from '../../http';
import type { UpstreamFailure } from '../events';
import type { TryFailure } from './retry';

/**
 * What kind of failure an error of undici's is. Not connecting within
 * `connect_timeout_ms` is the upstream being unreachable, as Envoy answers
 * it (503), not slow.
 */
export function failureOf(err: unknown): UpstreamFailure {
  switch ((err as { code?: string } | null)?.code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'timeout';
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'EADDRNOTAVAIL':
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'refused';
    default:
      return 'other';
  }
}

/** The answer for an upstream that failed before sending its response headers. */
export function upstreamFailure(failure: UpstreamFailure, err: unknown, timeoutMs: number): HttpError {
  switch (failure) {
    case 'timeout':
      return HttpError.of('UPSTREAM_TIMEOUT', { timeoutMs }, { cause: err });
    case 'refused':
      return HttpError.of('UPSTREAM_UNAVAILABLE', { cause: err });
    default:
      return HttpError.of('UPSTREAM_FAILED', { cause: err });
  }
}

/** Whether a try failed to connect (the request never reached the upstream), or later. */
export function tryFailureOf(err: unknown): TryFailure {
  return failureOf(err) === 'refused' ? 'connect' : 'reset';
}
