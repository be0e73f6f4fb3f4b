/**
 * @module errors/http-error
 * The error every module throws to answer with an error status, the body it
 * is written as (`{code, message, detail?, info_url?}`, `code` being the
 * status), and {@link HttpError.of}, which raises an error of the registry
 * by its name.
 */
import { STATUS_CODES } from 'node:http';
import { fillTemplate, type TemplateValues } from './define';
import { ERRORS, templateOf, type ErrorCode } from './registry';

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

type Declared<C extends ErrorCode> = (typeof ERRORS)[C];

/** The names of the values error `C` is raised with: the marks of its detail. */
type ValueNames<C extends ErrorCode> =
  Declared<C> extends { readonly detail: infer D extends string } ? TemplateValues<D> : never;

/** The values error `C` is raised with, by the names its detail marks. */
export type ErrorValues<C extends ErrorCode> = { readonly [K in ValueNames<C>]: string | number };

/** How error `C` is raised: with the status its `statusFrom` setting chose, when it has one. */
export type RaiseOptions<C extends ErrorCode> =
  Declared<C> extends { readonly statusFrom: string }
    ? HttpErrorOptions & { readonly status: number }
    : HttpErrorOptions;

/** What {@link HttpError.of} takes after the code: the values its detail marks, if any, then options. */
export type RaiseArgs<C extends ErrorCode> = [ValueNames<C>] extends [never]
  ? Declared<C> extends { readonly statusFrom: string }
    ? [options: RaiseOptions<C>]
    : [options?: RaiseOptions<C>]
  : Declared<C> extends { readonly statusFrom: string }
    ? [values: ErrorValues<C>, options: RaiseOptions<C>]
    : [values: ErrorValues<C>, options?: RaiseOptions<C>];

/** An error that knows the HTTP answer it stands for. Throw it from any module. */
export class HttpError extends Error {
  readonly status: number;
  readonly detail?: string;
  readonly headers: Record<string, string>;
  readonly infoUrl?: string;
  /**
   * The registry's stable name of the error (`LIMIT_NOT_INTEGER`), as Node
   * names its errors' kinds in `code`; undefined for one made with `new`.
   * The body's `code` is the status.
   */
  readonly code: ErrorCode | undefined;
  /** Marks it as safe to show: koa and the error handler use it. */
  readonly expose = true;

  /**
   * An error of `status` that is none of the registry's: an embedding app's
   * own, or a status another service answered with. Gatehouse raises its
   * own errors with {@link HttpError.of}.
   */
  constructor(status: number, detail?: string, options: HttpErrorOptions = {}) {
    super(statusLine(status), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HttpError';
    this.status = status;
    this.detail = detail;
    this.headers = options.headers ?? {};
    this.infoUrl = options.infoUrl;
    this.code = undefined;
  }

  /**
   * The registry's error `code`, its detail filled with `values`
   * (`HttpError.of('BODY_TOO_LARGE', { limit })`), with the headers it is
   * declared with and those of `options`.
   */
  static of<C extends ErrorCode>(code: C, ...args: RaiseArgs<C>): HttpError {
    const declared: { status: number; detail?: string; headers?: Readonly<Record<string, string>> } = ERRORS[code];
    const template = templateOf(code);
    const takesValues = template !== undefined && template.names.length > 0;
    const given = args as readonly unknown[];
    const values = takesValues ? (given[0] as Readonly<Record<string, unknown>>) : undefined;
    const options = (takesValues ? given[1] : given[0]) as (HttpErrorOptions & { status?: number }) | undefined;
    let headers = options?.headers;
    if (declared.headers !== undefined) headers = { ...declared.headers, ...headers };
    const err = new HttpError(
      options?.status ?? declared.status,
      values === undefined ? declared.detail : fillTemplate(template!, values),
      { headers, infoUrl: options?.infoUrl, cause: options?.cause },
    );
    (err as { code: ErrorCode | undefined }).code = code;
    return err;
  }
}

/** `"<status>: <reason phrase>"`, as the error body's `message`. */
export function statusLine(status: number): string {
  return `${status}: ${STATUS_CODES[status] ?? 'Unknown Status'}`;
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
