/**
 * @module http/response/representation
 * Content negotiation for response bodies: a handler sets `ctx.body` to a plain
 * value and this middleware writes it in the representation `Accept` chose.
 */
import type { Context, Middleware } from 'koa';
import type { ServerResponse } from 'node:http';
import { Stream } from 'node:stream';
import { HttpError } from '../../errors';
import { createFormatterRegistry, setFormattedBody, type Formatter, type FormatterRegistry } from './formatters';

export interface RepresentationOptions {
  formatters?: FormatterRegistry;
}

/** Adds `Accept` to the response's `Vary`: set outright on a response that varies on nothing yet. */
export function varyOnAccept(ctx: Context): void {
  const res: ServerResponse = ctx.res;
  if (res.hasHeader('vary')) ctx.vary('Accept');
  else res.setHeader('Vary', 'Accept');
}

/** Whether a body is a plain value for a formatter to write (not a string, buffer or stream). */
export function isRepresentable(body: unknown): boolean {
  return body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && !(body instanceof Stream);
}

/**
 * Makes the response vary on `Accept` and returns the formatter it chose; a
 * 406 naming the `supported` types when nothing registered is acceptable.
 */
export function chooseFormatter(ctx: Context, formatters: FormatterRegistry, supported: string): Formatter {
  varyOnAccept(ctx);
  const formatter = formatters.select(ctx.req);
  if (!formatter) throw HttpError.of('NOT_ACCEPTABLE', { types: supported });
  return formatter;
}

/** Writes an object body with `formatter`; false when the body is not one to write (none, a string, a stream). */
export function formatBody(ctx: Context, formatter: Formatter): boolean {
  const body: unknown = ctx.body;
  if (!isRepresentable(body)) return false;
  setFormattedBody(ctx, formatter, body);
  return true;
}

/**
 * Chooses the representation before the handler runs (406 when nothing
 * registered is acceptable) and serialises object bodies with it after.
 * Every response varies on `Accept`.
 */
export function representation(options: RepresentationOptions = {}): Middleware {
  const formatters = options.formatters ?? createFormatterRegistry();
  const supported = formatters.types.join(', ');

  return async function represent(ctx, next) {
    const formatter = chooseFormatter(ctx, formatters, supported);
    await next();
    formatBody(ctx, formatter);
  };
}
