/**
 * @module http/error-handler
 * The catch-all error middleware. Declared first in every app, so that it sees
 * every error thrown below it and every error status returned without a body,
 * and the handlers declared after it can still answer for themselves.
 */
import type { Context, Middleware } from 'koa';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import { errorBody, HttpError, statusOf, type ErrorCode } from '../errors';
import { headerName } from './request/raw-headers';
import { createFormatterRegistry, setFormattedBody, type FormatterRegistry } from './response/formatters';

export interface ErrorHandlerOptions {
  formatters?: FormatterRegistry;
  /** The `info_url` of an error body, by status; none when it returns undefined. */
  infoUrl?: (status: number) => string | undefined;
  /**
   * Told of every unexpected error (a 500 that was not an {@link HttpError}),
   * for logging. Defaults to koa's own `app.emit('error')`, or the context's
   * {@link UNEXPECTED_ERROR_LISTENER} when it has one.
   */
  onUnexpected?: (err: unknown, ctx: Context) => void;
}

/**
 * A context's own listener of unexpected errors, which the error handlers
 * tell instead of emitting on `ctx.app`: set by an app that runs on another
 * app's context (mounted), whose `error` listeners are that other app's.
 */
export const UNEXPECTED_ERROR_LISTENER = Symbol('gatehouse.unexpectedErrorListener');

type WithListener = Context & { [UNEXPECTED_ERROR_LISTENER]?: (err: unknown, ctx: Context) => void };

/** Koa's way of telling of an error the app answered itself, unless the context names a listener of its own. */
function emitUnexpected(err: unknown, ctx: Context): void {
  const listener = (ctx as WithListener)[UNEXPECTED_ERROR_LISTENER];
  if (listener) listener(err, ctx);
  else ctx.app.emit('error', err, ctx);
}

const ANSWERED_ERROR: unique symbol = Symbol('answered error');
type MarkedResponse = ServerResponse & { [ANSWERED_ERROR]?: ErrorCode };

/**
 * The registry's code of the error `res` was answered with, when it was
 * one of the registry's (for the access log); undefined for any other answer.
 */
export function answeredError(res: ServerResponse): ErrorCode | undefined {
  return (res as MarkedResponse)[ANSWERED_ERROR];
}

/**
 * What an error status left without a body stands for: Koa's 404 of a path
 * nothing answered, a router's 405. Any other is answered by its status alone.
 */
const LEFT_WITHOUT_BODY: Readonly<Partial<Record<number, ErrorCode>>> = { 404: 'NOT_FOUND', 405: 'METHOD_NOT_ALLOWED' };

/** Writes error bodies: shared by {@link errorHandler} and the service apps' conventions. */
export interface ErrorResponder {
  /** Answers `status` with the error body in the representation the request accepts (JSON when none). */
  write(ctx: Context, status: number, detail?: string, headers?: Record<string, string>, info?: string): void;
  /** Answers with `err`, keeping the headers set so far (a handler's own error, not one it failed with). */
  raise(ctx: Context, err: HttpError): void;
  /** Answers for anything thrown: its status, and its detail and headers when it is safe to show them. */
  answer(ctx: Context, err: unknown): void;
  /** Gives an error status set without a body (koa's default 404, a router's 405) the error body. */
  fillEmpty(ctx: Context): void;
}

/** Builds the {@link ErrorResponder} of `options`. */
export function errorResponder(options: ErrorHandlerOptions = {}): ErrorResponder {
  const formatters = options.formatters ?? createFormatterRegistry();
  const infoUrl = options.infoUrl ?? (() => undefined);
  const onUnexpected = options.onUnexpected ?? emitUnexpected;

  function write(ctx: Context, status: number, detail?: string, headers?: Record<string, string>, info?: string): void {
    const formatter = formatters.select(ctx.req) ?? formatters.get(formatters.types[0])!;
    if (headers) for (const name in headers) ctx.set(headerName(name), headers[name]);
    ctx.status = status;
    setFormattedBody(ctx, formatter, errorBody(status, detail, info ?? infoUrl(status)));
    ctx.vary('Accept');
  }

  function raise(ctx: Context, err: HttpError): void {
    if (err.code !== undefined) (ctx.res as MarkedResponse)[ANSWERED_ERROR] = err.code;
    write(ctx, err.status, err.detail, err.headers, err.infoUrl);
  }

  function answer(ctx: Context, err: unknown): void {
    const status = statusOf(err);
    const known = err instanceof HttpError;
    // Anything may be thrown, `null` included: read it only as an object.
    const e: { expose?: unknown; message?: unknown; headers?: unknown } =
      typeof err === 'object' && err !== null ? err : {};
    const exposed = known || (status < 500 && e.expose === true);
    if (!known && status >= 500) onUnexpected(err, ctx);
    if (ctx.headerSent || !ctx.writable) return;
    // Headers a handler set before failing describe a response that is not sent.
    for (const name of ctx.res.getHeaderNames()) ctx.res.removeHeader(name);
    // An exception nothing expected is answered as the registry's INTERNAL_ERROR, whatever it was.
    const code = known ? err.code : status === 500 ? 'INTERNAL_ERROR' : undefined;
    if (code !== undefined) (ctx.res as MarkedResponse)[ANSWERED_ERROR] = code;
    write(
      ctx,
      status,
      exposed ? detailOf(err, status) : undefined,
      exposed ? headersOf(e.headers) : undefined,
      known ? err.infoUrl : undefined,
    );
  }

  function fillEmpty(ctx: Context): void {
    const response = ctx.response;
    const status = response.status;
    if (status >= 400 && (response.body === null || response.body === undefined) && ctx.respond !== false) {
      const code = LEFT_WITHOUT_BODY[status];
      if (code !== undefined) (ctx.res as MarkedResponse)[ANSWERED_ERROR] = code;
      write(ctx, status);
    }
  }

  return { write, raise, answer, fillEmpty };
}

/**
 * Turns every error into `{code, message, info_url?}` in the negotiated
 * representation. Unknown exceptions become a 500 whose body says nothing of
 * the exception.
 */
export function errorHandler(options: ErrorHandlerOptions = {}): Middleware {
  return answeringErrors((_ctx, next) => next(), options);
}

/**
 * `middleware` with {@link errorHandler} around it, as one middleware: for an
 * app whose whole work is one middleware, a step less on every request.
 */
export function answeringErrors(middleware: Middleware, options: ErrorHandlerOptions = {}): Middleware {
  const errors = errorResponder(options);
  return async function handleErrors(ctx, next) {
    try {
      await middleware(ctx, next);
      errors.fillEmpty(ctx);
    } catch (err) {
      errors.answer(ctx, err);
    }
  };
}

/**
 * What an exposable error says beyond its status line: an HttpError's detail,
 * or the message of an http-errors error (`ctx.throw(400, 'why')`) unless it
 * is only the reason phrase again (`ctx.throw(404)`).
 */
function detailOf(err: unknown, status: number): string | undefined {
  if (err instanceof HttpError) return err.detail;
  const message = (err as { message?: unknown }).message;
  if (typeof message !== 'string' || message === '' || message === STATUS_CODES[status]) return undefined;
  return message;
}

/** The headers an exposable error asks for, when they are a plain record of strings. */
function headersOf(headers: unknown): Record<string, string> | undefined {
  if (headers === null || typeof headers !== 'object') return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string' || typeof value === 'number') out[name] = String(value);
  }
  return out;
}
