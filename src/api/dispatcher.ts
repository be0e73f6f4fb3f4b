/**
 * @module api/dispatcher
 * The version dispatcher: `/v1` and `/v2` mounted as isolated apps with their
 * prefix stripped; any other prefix is a 404.
 */
import Koa from 'koa';
import mount from 'koa-mount';
import { chooseFormatter, createFormatterRegistry, errorResponder, HttpError, leanKoa, redirectToSlash } from '../http';
import { createMessageStore } from './store';
import type { ApiDeps } from './types';
import { createV1App } from './v1';
import { createV2App } from './v2';

/** The version apps by prefix, in the order they are tried. */
export type VersionFactories = Readonly<Record<string, (deps: ApiDeps) => Koa>>;

const VERSIONS: VersionFactories = { '/v1': createV1App, '/v2': createV2App };

/** The API's app, and the version apps it mounts, by prefix. */
export interface BuiltApi {
  readonly app: Koa;
  readonly versions: Readonly<Record<string, Koa>>;
}

/**
 * Builds the API: every version over one store (the demo data unless
 * `deps.store` is given). `versions` replaces the version table, for an
 * embedding app that adds one.
 */
export function createApiApp(deps: ApiDeps = {}, versions: VersionFactories = VERSIONS): Koa {
  return buildApi(deps, versions).app;
}

/** {@link createApiApp}, with the version apps it mounts. */
export function buildApi(deps: ApiDeps = {}, versions: VersionFactories = VERSIONS): BuiltApi {
  const shared: ApiDeps = { ...deps, store: deps.store ?? createMessageStore() };
  const prefixes = Object.keys(versions);
  // No error middleware of its own: each version app answers its errors
  // itself, and the only other answers are the redirect and the 404 below.
  const app = leanKoa(new Koa({ proxy: deps.proxy ?? false }));
  app.silent = true;
  const formatters = createFormatterRegistry();
  const errors = errorResponder({ formatters });
  const supported = formatters.types.join(', ');
  const versionList = prefixes.join(', ');

  // A version's root is a resource like a collection: `/v1` redirects to `/v1/`,
  // as a version app's collection does, after the same negotiation (406 first).
  app.use((ctx, next) => {
    if (!prefixes.includes(ctx.path)) return next();
    try {
      chooseFormatter(ctx, formatters, supported);
      redirectToSlash(ctx);
    } catch (err) {
      errors.answer(ctx, err);
    }
  });
  const apps: Record<string, Koa> = {};
  for (const prefix of prefixes) app.use(mount(prefix, (apps[prefix] = versions[prefix](shared))));
  app.use((ctx) => {
    try {
      // A client that can read none of the representations gets the 406 first.
      chooseFormatter(ctx, formatters, supported);
      // A version app without a 404 of its own passes on what it does not know:
      // that path has a version, and its 404 says nothing else.
      const versioned = prefixes.some((prefix) => ctx.path.startsWith(`${prefix}/`));
      errors.raise(
        ctx,
        versioned ? HttpError.of('NOT_FOUND') : HttpError.of('API_VERSION_MISSING', { versions: versionList }),
      );
    } catch (err) {
      errors.answer(ctx, err);
    }
  });
  return { app, versions: Object.freeze(apps) };
}
