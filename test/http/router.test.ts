/**
 * @module test/http/router
 * The router dispatch with chains composed once: it answers as koa-router's
 * own `routes()` does (params, captures, the matched route, 405 and Allow
 * through `allowedMethods`, HEAD, OPTIONS, mounts), request after request.
 */
import assert from 'node:assert/strict';
import Koa, { type Context, type Middleware } from 'koa';
import mount from 'koa-mount';
import Router from 'koa-router';
import request from 'supertest';
import { createServiceApp, redirectToSlash, routes } from '../../src/http';

type Dispatch = (router: Router) => Middleware;
const OWN: Dispatch = routes;
const KOA_ROUTER: Dispatch = (router) => router.routes() as Middleware;

/** What a handler saw of the routing, as it answers it. */
function seen(ctx: Context) {
  const c = ctx as Context & {
    captures?: string[];
    routerPath?: string;
    _matchedRoute?: string;
    matched?: { path: string }[];
  };
  return {
    path: ctx.path,
    params: { ...ctx.params },
    requestParams: { ...(ctx.request as unknown as { params: object }).params },
    captures: c.captures,
    routerPath: c.routerPath,
    matchedRoute: c._matchedRoute,
    matched: c.matched?.map((layer) => layer.path),
  };
}

/** A service app routed as the API versions are: strict, collections with a slash, a 404 of its own. */
function messagesApp(dispatch: Dispatch): Koa {
  const app = createServiceApp();
  const router = new Router({ strict: true });
  router.use(async (ctx, next) => {
    ctx.set('X-Before', 'yes');
    await next();
  });
  router.get('/messages/', (ctx) => {
    ctx.body = { list: true, ...seen(ctx) };
  });
  router.all('/messages', redirectToSlash);
  router.get('/messages/:id', (ctx) => {
    ctx.body = seen(ctx);
  });
  router.delete('/messages/:id', (ctx) => {
    ctx.status = 204;
  });
  router.get('/accounts/:account/messages/:id', (ctx) => {
    ctx.body = seen(ctx);
  });
  app.use(dispatch(router));
  app.use(router.allowedMethods());
  app.use((ctx) => {
    ctx.status = 404;
  });
  return app;
}

/** `/v1` mounted in an API app, itself mounted at `/host` in a host app: the prefixes the API can sit under. */
function nested(dispatch: Dispatch): Koa {
  const api = new Koa();
  api.use(mount('/v1', messagesApp(dispatch)));
  const host = new Koa();
  host.use(mount('/host', api));
  return host;
}

/** A request's status, headers of interest and body. */
async function answer(app: Koa, method: 'get' | 'head' | 'post' | 'put' | 'delete' | 'options', path: string) {
  const res = await request(app.callback())[method](path).set('Host', 'api.test');
  const pick = ['allow', 'location', 'content-type', 'x-before', 'vary'];
  return {
    status: res.status,
    headers: Object.fromEntries(pick.map((h) => [h, res.headers[h]])),
    body: res.body as unknown,
  };
}

const CASES: ['get' | 'head' | 'post' | 'put' | 'delete' | 'options', string][] = [
  ['get', '/messages/1'],
  ['get', '/messages/caf%C3%A9'],
  ['get', '/accounts/2/messages/7'],
  ['get', '/messages/'],
  ['get', '/messages?x=1'],
  ['post', '/messages'],
  ['head', '/messages/1'],
  ['delete', '/messages/1'],
  ['put', '/messages/1'],
  ['post', '/messages/'],
  ['options', '/messages/1'],
  ['get', '/messages/1/'],
  ['get', '/nothing'],
];

describe('http/router', () => {
  describe('answers every request as koa-router’s routes() does', () => {
    for (const [method, path] of CASES) {
      it(`${method.toUpperCase()} ${path}, alone and under nested mounts`, async () => {
        assert.deepEqual(
          await answer(messagesApp(OWN), method, path),
          await answer(messagesApp(KOA_ROUTER), method, path),
        );
        assert.deepEqual(
          await answer(nested(OWN), method, `/host/v1${path}`),
          await answer(nested(KOA_ROUTER), method, `/host/v1${path}`),
        );
      });
    }
  });

  it('gives each request its own params, the second time a route is taken too', async () => {
    const app = messagesApp(OWN);
    for (const id of ['1', '2', '3']) {
      const res = await request(app.callback()).get(`/accounts/9/messages/${id}`).expect(200);
      assert.deepEqual(res.body.params, { account: '9', id });
      assert.deepEqual(res.body.requestParams, { account: '9', id });
      assert.deepEqual(res.body.captures, ['9', id]);
      assert.equal(res.body.matchedRoute, '/accounts/:account/messages/:id');
      assert.equal(res.body.routerPath, '/accounts/:account/messages/:id');
    }
  });

  it('decodes params and sees the path without the mount prefixes', async () => {
    const res = await request(nested(OWN).callback()).get('/host/v1/messages/caf%C3%A9').expect(200);
    assert.equal(res.body.params.id, 'café');
    assert.equal(res.body.path, '/messages/caf%C3%A9');
    assert.equal(res.body.matchedRoute, '/messages/:id');
  });

  it('answers a method the path does not take with 405 and Allow', async () => {
    const res = await request(nested(OWN).callback()).put('/host/v1/messages/1').expect(405);
    assert.equal(res.headers.allow, 'HEAD, GET, DELETE');
    assert.deepEqual(res.body, { code: 405, message: '405: Method Not Allowed' });
  });

  it('answers HEAD as GET without a body', async () => {
    const res = await request(messagesApp(OWN).callback()).head('/messages/1').expect(200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.text, undefined);
  });

  it('runs every matched layer in order, each with its own params', async () => {
    const app = new Koa();
    const router = new Router();
    const order: string[] = [];
    router.get('/a/:x', async (ctx, next) => {
      order.push(`first ${JSON.stringify(ctx.params)} ${(ctx as Context & { _matchedRoute?: string })._matchedRoute}`);
      await next();
    });
    router.get('/a/:y', (ctx) => {
      order.push(`second ${JSON.stringify(ctx.params)} ${(ctx as Context & { _matchedRoute?: string })._matchedRoute}`);
      ctx.body = 'ok';
    });
    app.use(routes(router));
    await request(app.callback()).get('/a/1').expect(200, 'ok');
    await request(app.callback()).get('/a/2').expect(200, 'ok');
    assert.deepEqual(order, [
      'first {"x":"1"} /a/:x',
      'second {"x":"1","y":"1"} /a/:y',
      'first {"x":"2"} /a/:x',
      'second {"x":"2","y":"2"} /a/:y',
    ]);
  });

  it('runs the param middleware of router.param(), added after the first request too', async () => {
    const app = new Koa();
    const router = new Router();
    router.get('/users/:user', (ctx) => {
      ctx.body = (ctx as Context & { who?: string }).who ?? 'nobody';
    });
    app.use(routes(router));
    await request(app.callback()).get('/users/ann').expect(200, 'nobody');
    router.param('user', (user, ctx, next) => {
      (ctx as Context & { who?: string }).who = user.toUpperCase();
      return next();
    });
    await request(app.callback()).get('/users/ann').expect(200, 'ANN');
  });

  it('goes on to the next middleware when no route takes the method', async () => {
    const app = new Koa();
    const router = new Router();
    router.post('/x', (ctx) => {
      ctx.body = 'posted';
    });
    app.use(routes(router));
    app.use((ctx) => {
      ctx.body = `after: ${(ctx as Context & { matched?: { path: string }[] }).matched?.map((l) => l.path).join()}`;
    });
    await request(app.callback()).get('/x').expect(200, 'after: /x');
    await request(app.callback()).post('/x').expect(200, 'posted');
  });

  it('matches a router bound to a host only on that host', async () => {
    const app = new Koa();
    const router = new Router({ host: 'api.test' } as Router.IRouterOptions);
    router.get('/x', (ctx) => {
      ctx.body = 'routed';
    });
    app.use(routes(router));
    app.use((ctx) => {
      ctx.body = 'not routed';
    });
    await request(app.callback()).get('/x').set('Host', 'api.test').expect(200, 'routed');
    await request(app.callback()).get('/x').set('Host', 'other.test').expect(200, 'not routed');
  });
});
