/**
 * @module http/representation
 * Content negotiation for response bodies: a handler sets `ctx.body` to a plain
 * value and this middleware writes it in the representation `Accept` chose.
 */
import type { Middleware } from 'koa';
import { Stream } from 'node:stream';
import { HttpError } from './errors';
import { createFormatterRegistry, type FormatterRegistry } from './formatters';

export interface RepresentationOptions {
  formatters?: FormatterRegistry;
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
    ctx.vary('Accept');
    const formatter = formatters.select(ctx.req);
    if (!formatter) throw new HttpError(406, `supported types: ${supported}`);
    await next();
    const body: unknown = ctx.body;
    if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && !(body instanceof Stream)) {
      const status = ctx.status;
      ctx.body = formatter.format(body);
      ctx.status = status;
      ctx.type = formatter.type;
    }
  };
}
