/**
 * @module http/statuses
 * Error statuses by name, for the errors of an embedding app's own modules:
 * `httpError('NOT_FOUND', 'no such report')`. Gatehouse's own errors are
 * declared in the registry (src/errors) and raised with `HttpError.of`.
 */
import { HttpError, type HttpErrorOptions } from '../errors';

/** The error statuses, by name. */
export const StatusCodes = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE_CONTENT: 422,
  TOO_MANY_REQUESTS: 429,
  REQUEST_HEADER_FIELDS_TOO_LARGE: 431,
  INTERNAL_SERVER_ERROR: 500,
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
} as const;

/** The name of an error status. */
export type StatusName = keyof typeof StatusCodes;

/** @deprecated {@link StatusCodes}: the registry's error codes are `ErrorCode`s. */
export const ErrorCodes = StatusCodes;

/** @deprecated {@link StatusName}: the registry's error codes are `ErrorCode`s. */
export type ErrorName = StatusName;

/** An {@link HttpError} of the status `name` names, with the `detail` an app writes for it. */
export function httpError(name: StatusName, detail?: string, options?: HttpErrorOptions): HttpError {
  return new HttpError(StatusCodes[name], detail, options);
}
