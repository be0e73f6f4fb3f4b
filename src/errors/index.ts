/**
 * @module errors
 * The errors a client can get, declared once by name: a stable code, its
 * status, and the template of its `detail`. Code raises them by name with
 * `HttpError.of(code, values)`; every module writes them as one body,
 * `{code, message, detail?, info_url?}`, whose `code` is the status.
 */
export {
  HttpError,
  statusLine,
  errorBody,
  statusOf,
  type ErrorBody,
  type HttpErrorOptions,
  type ErrorValues,
  type RaiseArgs,
  type RaiseOptions,
} from './http-error';
export { ERRORS, ERROR_GROUPS, type ErrorCode } from './registry';
export type { AuthErrorCode } from './auth';
export { defineErrors, type ErrorSpec, type ErrorGroup, type TemplateValues } from './define';
