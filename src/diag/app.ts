/**
 * @module diag/app
 * The diagnostic module: its Koa app answers `/` with the page for people
 * (HTML, the default) or its JSON form for programs, written in slices of
 * the event loop (./render) however many routes it lists.
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
  ORIGINAL_PATH,
  routes,
  xmlFormatter,
  type Formatter,
} from '../http';
import { createSliceGate, type GatehouseModule, type SliceGate } from '../gateway';
import { PAGE_CSP, renderDiagPage } from './page';
import { createDiagRenderer, setPiecesBody, type DiagForm } from './render';
import type { DiagSnapshot } from './types';

export interface DiagModuleOptions {
  /**
   * Called for every page view: what the gateway is now. A route object
   * that is frozen, and all within it, is taken not to change: what it
   * renders to is kept while it lives (a gateway's routes, which change
   * only with its configuration; see countedSnapshotSteps).
   */
  snapshot: () => DiagSnapshot | Promise<DiagSnapshot>;
  /** The module name records use. Default `diag`. */
  name?: string;
  /**
   * The slices of the event loop the pages are written in, shared with
   * whatever else goes through it (the snapshot's own work). Default: a
   * gate of the module's own.
   */
  slices?: SliceGate;
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
  if (typeof value !== 'string') throw HttpError.of('QUERY_ARGUMENT_REPEATED', { name: 'json' });
  throw HttpError.of('DIAG_JSON_INVALID');
}

/**
 * The client asked for the page without its trailing slash: relative links
 * on it would resolve one level up, so send it to the slash form. Only the
 * gateway (or a mount) can tell, from the path it recorded.
 */
function slashless(ctx: Context): boolean {
  if (ctx.path !== '/') return false;
  const original: unknown = ctx.state[ORIGINAL_PATH];
  const path = typeof original === 'string' ? original : ctx.originalUrl.split('?', 1)[0];
  return !path.endsWith('/');
}

/** Builds the diag module: `{name: 'diag', app}`. */
export function createDiagModule(options: DiagModuleOptions): GatehouseModule {
  const pages = createFormatterRegistry([htmlFormatter, jsonFormatter, xmlFormatter]);
  const supported = pages.types.join(', ');
  const forms = new Map<Formatter, DiagForm>([
    [htmlFormatter, 'html'],
    [jsonFormatter, 'json'],
    [xmlFormatter, 'xml'],
  ]);
  const slices = options.slices ?? createSliceGate();
  const renderer = createDiagRenderer();

  const router = new Router({ strict: true });
  router.get('/', async (ctx) => {
    const formatter = jsonAsked(ctx) ? jsonFormatter : pages.select(ctx.req);
    ctx.vary('Accept');
    if (!formatter) throw HttpError.of('NOT_ACCEPTABLE', { types: supported });
    const snapshot = await options.snapshot();
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (formatter === htmlFormatter) {
      ctx.set('Content-Security-Policy', PAGE_CSP);
      ctx.set('Referrer-Policy', 'no-referrer');
    }
    await setPiecesBody(ctx, formatter, renderer.pieces(forms.get(formatter)!, snapshot), slices);
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
