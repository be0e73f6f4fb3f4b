/**
 * @module http/errors
 * The one error registry of the project: every error any module returns has a
 * code here, a status, and the body shape `{code, message, info_url?}`.
 */
import { STATUS_CODES } from 'node:http';

/** Every error the project answers with, by name. */
export const ErrorCodes = {
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

export type ErrorName = keyof typeof ErrorCodes;

/** The JSON error body of every module. */
export interface ErrorBody {
  code: number;
  message: string;
  info_url?: string;
  /** What exactly was wrong, for 4xx answers; never set from an unknown exception. */
  detail?: string;
}

export interface HttpErrorOptions {
  /** Headers the error response carries (`Allow`, `WWW-Authenticate`, `Retry-After`...). */
  headers?: Record<string, string>;
  infoUrl?: string;
  cause?: unknown;
}

/** An error that knows the HTTP answer it stands for. Throw it from any module. */
export class HttpError extends Error {
  readonly status: number;
  readonly detail?: string;
  readonly headers: Record<string, string>;
  readonly infoUrl?: string;
  /** Marks it as safe to show: koa and the error handler use it. */
  readonly expose = true;

  constructor(status: number, detail?: string, options: HttpErrorOptions = {}) {
    super(statusLine(status), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HttpError';
    this.status = status;
    this.detail = detail;
    this.headers = options.headers ?? {};
    this.infoUrl = options.infoUrl;
  }
}

/** `"<status>: <reason phrase>"`, as the error body's `message`. */
export function statusLine(status: number): string {
  return `${status}: ${STATUS_CODES[status] ?? 'Unknown Status'}`;
}

/** Builds an {@link HttpError} from its registry name. */
export function httpError(name: ErrorName, detail?: string, options?: HttpErrorOptions): HttpError {
  return new HttpError(ErrorCodes[name], detail, options);
}

/** The error body for a status. */
export function errorBody(status: number, detail?: string, infoUrl?: string): ErrorBody {
  const body: ErrorBody = { code: status, message: statusLine(status) };
  if (infoUrl) body.info_url = infoUrl;
  if (detail) body.detail = detail;
  return body;
}

/**
 * Reads the status of anything thrown: our HttpError, koa's `ctx.throw`,
 * http-errors, raw-body's 413. Everything else is a 500.
 */
export function statusOf(err: unknown): number {
  const e = err as { status?: unknown; statusCode?: unknown } | null;
  const status = typeof e?.status === 'number' ? e.status : typeof e?.statusCode === 'number' ? e.statusCode : 500;
  return status >= 400 && status <= 599 ? status : 500;
}
