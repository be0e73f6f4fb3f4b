/**
 * @module http
 * The HTTP conventions every module shares: the error registry and error
 * middleware, content negotiation, canonical slashes, collection queries,
 * absolute URLs and JSON bodies.
 */
import Koa from 'koa';
import { errorHandler, type ErrorHandlerOptions } from './error-handler';
import { createFormatterRegistry, type FormatterRegistry } from './formatters';
import { representation } from './representation';

export * from './errors';
export * from './formatters';
export * from './error-handler';
export * from './representation';
export * from './collection';
export * from './slashes';
export * from './urls';
export * from './body';

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
 * A Koa app with the conventions in place: the error middleware first, then
 * content negotiation. Mount routes on it with `app.use`.
 */
export function createServiceApp(options: ServiceAppOptions = {}): Koa {
  const formatters = options.formatters ?? createFormatterRegistry();
  const app = new Koa({ proxy: options.proxy ?? false });
  app.silent = true;
  app.use(errorHandler({ ...options, formatters }));
  app.use(representation({ formatters }));
  return app;
}
