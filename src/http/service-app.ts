/**
 * @module http/service-app
 * A service's Koa app with the project's conventions in place: error bodies
 * and content negotiation, in one middleware in front of the routes.
 */
import Koa, { type Middleware } from 'koa';
import { errorResponder, type ErrorHandlerOptions } from './error-handler';
import { createFormatterRegistry, type FormatterRegistry } from './response/formatters';
import { leanKoa } from './lean-koa';
import { chooseFormatter, formatBody } from './response/representation';

export interface ServiceAppOptions extends ErrorHandlerOptions {
  formatters?: FormatterRegistry;
  /**
   * Trust `X-Forwarded-Proto/-Host` for absolute URLs: on when running behind a
   * gateway. Only the outermost app's setting counts: koa-mount (and the
   * gateway's in-process routing) run a mounted app on its parent's context.
   */
  proxy?: boolean;
}

/**
 * The error handler and the representation middleware as one: what
 * `errorHandler()` then `representation()` do, with one step less on every
 * request. Every response varies on `Accept`; object bodies are written in
 * the negotiated representation (406 when there is none); every error, thrown
 * or an error status without a body, gets the error body.
 */
export function serviceConventions(options: ServiceAppOptions = {}): Middleware {
  const formatters = options.formatters ?? createFormatterRegistry();
  const errors = errorResponder({ ...options, formatters });
  const supported = formatters.types.join(', ');

  return async function conventions(ctx, next) {
    try {
      const formatter = chooseFormatter(ctx, formatters, supported);
      await next();
      if (!formatBody(ctx, formatter)) errors.fillEmpty(ctx);
    } catch (err) {
      errors.answer(ctx, err);
    }
  };
}

/**
 * A Koa app with the conventions in place ({@link serviceConventions}). Mount
 * routes on it with `app.use`.
 */
export function createServiceApp(options: ServiceAppOptions = {}): Koa {
  const app = leanKoa(new Koa({ proxy: options.proxy ?? false }));
  app.silent = true;
  app.use(serviceConventions(options));
  return app;
}
