/**
 * @module api/version-app
 * One API version as an isolated Koa app: its own error middleware, routes
 * and 404. It never sees its prefix; links carry it all the same, and a
 * Mapping's rewrite is undone in them.
 */
import type Koa from 'koa';
import Router from 'koa-router';
import {
  absoluteUrl,
  allowedMethods,
  createServiceApp,
  parseItemQuery,
  pickFields,
  recordMount,
  routes,
} from '../http';
import { accountRoutes } from './accounts';
import { messageRoutes } from './messages';
import { createMessageStore } from './store';
import type { ApiDeps, ApiVersion } from './types';

const ROOT = { fields: ['version', 'messages_url', 'accounts_url'] } as const;

/** Builds the app of `version` over `deps.store` (the demo data by default). */
export function createVersionApp(version: ApiVersion, deps: ApiDeps = {}): Koa {
  const store = deps.store ?? createMessageStore();
  const app = createServiceApp({ proxy: deps.proxy });
  // Strict and case-sensitive, as the gateway matches prefixes: a path spelled another way
  // (`/messages/1/`, `/Messages/1`) may have passed another Mapping, with other auth and limits.
  const router = new Router({ strict: true, sensitive: true });

  router.get('/', (ctx) => {
    // Like any single resource: `fields` only, and any other argument a 400.
    const { fields } = parseItemQuery(ctx.query, ROOT);
    const links = { messages_url: absoluteUrl(ctx, '/messages/'), accounts_url: absoluteUrl(ctx, '/accounts/') };
    ctx.body = pickFields({ version: version.name, ...links }, fields);
  });
  messageRoutes(router, store, version.message);
  accountRoutes(router, store);

  // Links are paths of the module, the version's prefix in front: the gateway's
  // Mapping maps those to the client's (see http/request/client-path).
  app.use(recordMount);
  app.use(routes(router));
  app.use(allowedMethods(router));
  // The end of this app: a path it does not know is its own 404, never the
  // business of whatever it is mounted in. A status, not a throw, so that
  // allowedMethods above can still make it a 405.
  app.use((ctx) => {
    ctx.status = 404;
  });
  return app;
}
