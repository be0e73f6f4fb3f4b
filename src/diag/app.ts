/**
 * @module diag/app
 * The diagnostic module: its Koa app answers `/` with the page for people
 * (HTML, the default) or its JSON form for programs.
 */
import Koa from 'koa';
import type { Context } from 'koa';
import Router from 'koa-router';
import {
  allowedMethods,
  basePath,
  createFormatterRegistry,
  errorHandler,
  HttpError,
  jsonFormatter,
  leanKoa,
  setFormattedBody,
  ORIGINAL_PATH,
  routes,
  xmlFormatter,
  type Formatter,
} from '../http';
import type { GatehouseModule } from '../gateway';
import { PAGE_CSP, renderDiagPage } from './page';
import type { DiagSnapshot } from './snapshot';

export interface DiagModuleOptions {
  /** Called for every page view: what the gateway is now. */
  snapshot: () => DiagSnapshot | Promise<DiagSnapshot>;
  /** The module name records use. Default `diag`. */
  name?: string;
}

const htmlFormatter: Formatter = {
  type: 'text/html',
  format: (body) => renderDiagPage(body as DiagSnapshot),
};

/** Whether `?json=` asks for JSON: `true`/`1`/empty yes, `false`/`0` no, anything else a 400. */
function jsonAsked(ctx: Context): boolean {
  const value = ctx.query.json;
  if (value === undefined) return false;
  if (value === 'true' || value === '1' || value === '') return true;
  if (value === 'false' || value === '0') return false;
  throw new HttpError(400, 'json must be true or false');
}

/**
 * The client asked for the page without its trailing slash: relative links
 * on it would resolve one level up, so send it to the slash form. Only the
 * gateway (or a mount) can tell, from the path it recorded.
 */
function slashless(ctx: Context): boolean {
  if (ctx.path !== '/') return false;
  const original = ctx.state[ORIGINAL_PATH];
  const path = typeof original === 'string' ? original : ctx.originalUrl.split('?', 1)[0];
  return !path.endsWith('/');
}

/** Builds the diag module: `{name: 'diag', app}`. */
export function createDiagModule(options: DiagModuleOptions): GatehouseModule {
  const pages = createFormatterRegistry([htmlFormatter, jsonFormatter, xmlFormatter]);
  const supported = pages.types.join(', ');

  const router = new Router({ strict: true });
  router.get('/', async (ctx) => {
    const formatter = jsonAsked(ctx) ? jsonFormatter : pages.select(ctx.req);
    ctx.vary('Accept');
    if (!formatter) throw new HttpError(406, `supported types: ${supported}`);
    const snapshot = await options.snapshot();
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (formatter === htmlFormatter) {
      ctx.set('Content-Security-Policy', PAGE_CSP);
      ctx.set('Referrer-Policy', 'no-referrer');
    }
    setFormattedBody(ctx, formatter, snapshot);
  });

  const app = leanKoa(new Koa());
  app.silent = true;
  // Errors keep the project's JSON (or XML) body, whatever the page negotiates.
  app.use(errorHandler());
  app.use((ctx, next) => {
    if (!slashless(ctx)) return next();
    const query = ctx.querystring ? `?${ctx.querystring}` : '';
    ctx.status = ctx.method === 'GET' || ctx.method === 'HEAD' ? 301 : 308;
    ctx.redirect(`${basePath(ctx)}/${query}`);
    // Koa writes the redirect's body in HTML or plain text as Accept says.
    ctx.vary('Accept');
  });
  app.use(routes(router));
  app.use(allowedMethods(router));
  return { name: options.name ?? 'diag', app };
}
