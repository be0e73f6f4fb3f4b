/**
 * @module gateway/stages/auth-unavailable
 * What an AuthService's stage does when its service gives no answer (down,
 * slow past `timeout_ms`, its circuit breakers open), whichever protocol it
 * speaks: the failure is logged once a burst, then `failure_mode_allow` lets
 * the request through, or `status_on_error` answers it.
 */
import type { Context } from 'koa';
import pino from 'pino';
import { HttpError, redactAddress } from '../../http';
import type { AuthServiceRecord } from '../config/schema';
import { pacedFailureLog } from '../failure-log';
import type { AuthStageOptions } from './stage';

const EMPTY = Buffer.alloc(0);

/**
 * The answer of one AuthService to a request its service could not check:
 * true to let it through, false once a status without a body is set; an
 * error status is thrown as the gateway's error body.
 */
export function unavailableAnswer(
  record: AuthServiceRecord,
  options: AuthStageOptions,
): (ctx: Context, cause: unknown) => boolean {
  const events = options;
  const logFailure = pacedFailureLog(options.logger ?? pino({ name: 'gateway' }), options.now);
  const fields = { authService: redactAddress(record.auth_service), failureModeAllow: record.failure_mode_allow };
  const message = record.failure_mode_allow
    ? 'auth service unavailable; letting requests through'
    : 'auth service unavailable; refusing requests';
  return (ctx, cause) => {
    events.authDecision?.('error');
    logFailure(cause, fields, message);
    if (record.failure_mode_allow) return true;
    if (record.status_on_error < 400) {
      // Not an error status (a redirect, say): sent as it is, with no body.
      ctx.status = record.status_on_error;
      ctx.body = EMPTY;
      // Koa calls the empty body application/octet-stream; there is nothing to type.
      ctx.remove('Content-Type');
      return false;
    }
    throw HttpError.of('AUTH_SERVICE_UNAVAILABLE', { status: record.status_on_error, cause });
  };
}
