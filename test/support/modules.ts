/**
 * @module test/support/modules
 * Built-in modules for a gateway under test: an echo module that answers
 * with what it saw, and a registry of modules by name.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type Koa from 'koa';
import { absoluteUrl, createServiceApp, readJson } from '../../src/http';
import type { GatehouseModule } from '../../src/gateway';

/** What an echo module answers. */
export interface Echo {
  module: string;
  method: string;
  path: string;
  url: string;
  query: string;
  originalPath: unknown;
  mapping?: string;
  self: string;
  headers: IncomingHttpHeaders;
  body?: unknown;
}

/**
 * A module that answers every request with what it saw. `POST .../json`
 * reads a JSON body with a generous limit of its own (8 MiB), so that the
 * gateway's limit is the one that counts.
 */
export function echoModule(name: string): GatehouseModule & { app: Koa } {
  const app = createServiceApp();
  app.use(async (ctx) => {
    const echo: Echo = {
      module: name,
      method: ctx.method,
      path: ctx.path,
      url: ctx.url,
      query: ctx.querystring,
      originalPath: ctx.state.gatehouseOriginalPath,
      mapping: ctx.state.mapping?.name,
      self: absoluteUrl(ctx, ctx.path),
      headers: ctx.headers,
    };
    if (ctx.method === 'POST' && ctx.path.endsWith('/json')) echo.body = await readJson(ctx, 8 * 1024 * 1024);
    ctx.set('X-Echo-Module', name);
    ctx.body = echo;
  });
  return { name, app };
}

/** A registry of modules. */
export function registry(...modules: GatehouseModule[]): Map<string, GatehouseModule> {
  return new Map(modules.map((m) => [m.name, m]));
}
