/**
 * @module test/api/dispatcher
 * The version dispatcher: isolated version apps under /v1 and /v2, a 404 for
 * any other prefix, and links that stay right under any mount prefix.
 */
import assert from 'node:assert/strict';
import Koa from 'koa';
import mount from 'koa-mount';
import request from 'supertest';
import { createApiApp, createApiModule, createMessageStore, createV1App, createV2App } from '../../src/api';
import { createGateway } from '../../src/gateway';
import { createServiceApp } from '../../src/http';
import { configOf, mapping } from '../support/records';
import { registry } from '../support/modules';

const HOST = 'api.test';
const JSON_TYPE = 'application/json; charset=utf-8';
const UNKNOWN_PREFIX = {
  code: 404,
  message: '404: Not Found',
  detail: 'the path must start with an API version: /v1, /v2',
};

describe('api/dispatcher', () => {
  const server = createApiApp().callback();
  const get = (path: string) => request(server).get(path).set('Host', HOST);

  describe('a path outside every version', () => {
    for (const path of [
      '/v3/messages/1',
      '/x',
      '/',
      '/v1x/messages/1',
      '/V1/messages/1',
      '/v0/messages/',
      '/messages/1',
    ]) {
      it(`answers ${path} with 404 and the JSON error body`, async () => {
        const res = await get(path).expect(404).expect('Content-Type', JSON_TYPE).expect('Vary', 'Accept');
        assert.deepEqual(res.body, UNKNOWN_PREFIX);
      });
    }

    it('answers other methods with 404 too', async () => {
      const res = await request(server).post('/v3/messages/').send({}).expect(404);
      assert.deepEqual(res.body, UNKNOWN_PREFIX);
    });

    it('answers in XML when XML is asked for', async () => {
      const res = await get('/v3/messages/1')
        .set('Accept', 'application/xml')
        .expect(404)
        .expect('Content-Type', 'application/xml');
      assert.match(res.text, /<response><code>404<\/code><message>404: Not Found<\/message>/);
    });

    it('answers 406 when nothing acceptable can be written', async () => {
      await get('/v3/messages/1').set('Accept', 'image/png').expect(406).expect('Content-Type', JSON_TYPE);
    });
  });

  describe('the root of a version', () => {
    for (const v of ['v1', 'v2']) {
      it(`answers /${v}/ with links to the collections`, async () => {
        const res = await get(`/${v}/`).expect(200);
        assert.deepEqual(res.body, {
          version: v,
          messages_url: `http://${HOST}/${v}/messages/`,
          accounts_url: `http://${HOST}/${v}/accounts/`,
        });
      });

      it(`answers /${v}/ with only the fields asked for, and 400 for any other query argument`, async () => {
        const res = await get(`/${v}/?fields=version`).expect(200);
        assert.deepEqual(res.body, { version: v });
        const bad = await get(`/${v}/?limit=5`).expect(400).expect('Content-Type', JSON_TYPE);
        assert.deepEqual(bad.body, {
          code: 400,
          message: '400: Bad Request',
          detail: "unknown query argument 'limit'",
        });
        await get(`/${v}/?fields=content`).expect(400);
      });

      it(`redirects /${v} to /${v}/, 301 for GET and 308 for POST`, async () => {
        await get(`/${v}?a=1`).expect(301).expect('Location', `/${v}/?a=1`).expect('Vary', 'Accept');
        await request(server).post(`/${v}`).expect(308).expect('Location', `/${v}/`).expect('Vary', 'Accept');
      });
    }
  });

  describe('isolation of the version apps', () => {
    it('strips the prefix, so that an app never sees it', async () => {
      const seen: string[] = [];
      const probe = () => {
        const app = createServiceApp();
        app.use((ctx) => {
          seen.push(ctx.path);
          ctx.body = { ok: true };
        });
        return app;
      };
      const app = createApiApp({}, { '/v1': probe, '/v2': probe });
      await request(app.callback()).get('/v1/messages/1?x=1').expect(200);
      await request(app.callback()).get('/v2/accounts/').expect(200);
      assert.deepEqual(seen, ['/messages/1', '/accounts/']);
    });

    it('lets each version answer its errors with its own error middleware', async () => {
      const failing = () => {
        const app = createServiceApp({ infoUrl: () => 'https://v9.test/errors', onUnexpected: () => {} });
        app.use(() => {
          throw new Error('secret: db password is hunter2');
        });
        return app;
      };
      const app = createApiApp({}, { '/v9': failing });
      const res = await request(app.callback())
        .get('/v9/anything')
        .expect(500)
        .expect('Content-Type', JSON_TYPE)
        .expect('Vary', 'Accept');
      assert.deepEqual(res.body, {
        code: 500,
        message: '500: Internal Server Error',
        info_url: 'https://v9.test/errors',
      });
      assert.ok(!res.text.includes('hunter2'));
      const outside = await request(app.callback()).get('/v1/messages/1').expect(404);
      assert.equal(outside.body.detail, 'the path must start with an API version: /v9');
    });

    it('hides a failure of a version app that uses the default handlers', async () => {
      const failing = () => {
        const app = createServiceApp({ onUnexpected: () => {} });
        app.use((ctx) => ctx.throw(500, 'stack and secrets'));
        return app;
      };
      const res = await request(createApiApp({}, { '/v1': failing }).callback())
        .get('/v1/messages/1')
        .expect(500);
      assert.deepEqual(res.body, { code: 500, message: '500: Internal Server Error' });
    });

    it("answers a path unknown to a version with that version's own 404", async () => {
      for (const v of ['v1', 'v2']) {
        const res = await get(`/${v}/nothing/here`).expect(404).expect('Content-Type', JSON_TYPE);
        assert.deepEqual(res.body, { code: 404, message: '404: Not Found' });
      }
    });

    it('answers a path its version app passes on with a 404 that does not deny the version', async () => {
      // A version app of an embedding app, without a 404 of its own: koa-mount then goes on to the dispatcher.
      const partial = () => {
        const app = new Koa();
        app.use((ctx, next) => (ctx.path === '/forecast' ? (ctx.body = { sunny: true }) : next()));
        return app;
      };
      const app = createApiApp({}, { '/v1': createV1App, '/v3': partial }).callback();
      await request(app).get('/v3/forecast').expect(200);
      const res = await request(app).get('/v3/nothing').expect(404).expect('Content-Type', JSON_TYPE);
      assert.deepEqual(res.body, { code: 404, message: '404: Not Found' });
      const outside = await request(app).get('/v4/forecast').expect(404);
      assert.equal(outside.body.detail, 'the path must start with an API version: /v1, /v3');
    });

    it('serves a version app alone, at the root, with urls that have no prefix', async () => {
      for (const factory of [createV1App, createV2App]) {
        const res = await request(factory().callback()).get('/messages/5').set('Host', HOST).expect(200);
        assert.equal(res.body.url, `http://${HOST}/messages/5`);
        await request(factory().callback()).get('/v1/messages/5').expect(404);
      }
    });

    it('serves both versions from the store it is given', async () => {
      const store = createMessageStore({
        accounts: [{ id: 'a', name: 'A', created_at: '2025-01-01T00:00:00.000Z' }],
        messages: [
          { id: '100', account_id: 'a', text: '*hi*', language: 'en', created_at: '2025-01-01T00:00:00.000Z' },
        ],
      });
      const app = createApiApp({ store }).callback();
      assert.equal((await request(app).get('/v1/messages/100').expect(200)).body.content, 'hi');
      assert.equal((await request(app).get('/v2/messages/100').expect(200)).body.content, '*hi*');
      await request(app).get('/v1/messages/1').expect(404);
    });
  });

  describe('mounted under another prefix in a host app', () => {
    const host = new Koa();
    host.silent = true;
    let fellThrough = 0;
    host.use(mount('/host', createApiApp()));
    host.use((ctx) => {
      fellThrough++;
      ctx.body = 'host';
    });
    const hosted = (path: string) => request(host.callback()).get(path).set('Host', HOST);

    it('puts the host prefix and the version in url', async () => {
      for (const v of ['v1', 'v2']) {
        const res = await hosted(`/host/${v}/messages/1`).expect(200);
        assert.equal(res.body.url, `http://${HOST}/host/${v}/messages/1`);
      }
    });

    it('puts them in next links and the Link header', async () => {
      for (const v of ['v1', 'v2']) {
        const res = await hosted(`/host/${v}/messages/?limit=5`).expect(200);
        assert.equal(res.body.next, `http://${HOST}/host/${v}/messages/?limit=5&offset=5`);
        assert.equal(res.headers.link, `<http://${HOST}/host/${v}/messages/?limit=5&offset=5>; rel="next"`);
        assert.equal(res.body.items[0].url, `http://${HOST}/host/${v}/messages/1`);
      }
    });

    it('puts them in account links', async () => {
      const res = await hosted('/host/v2/accounts/2').expect(200);
      assert.equal(res.body.messages_url, `http://${HOST}/host/v2/accounts/2/messages/`);
      const messages = await hosted('/host/v2/accounts/2/messages/').expect(200);
      assert.equal(messages.body.items[0].account_url, `http://${HOST}/host/v2/accounts/2`);
    });

    it('keeps the host prefix in redirects', async () => {
      await hosted('/host/v1/messages?limit=2').expect(301).expect('Location', '/host/v1/messages/?limit=2');
      await hosted('/host/v2').expect(301).expect('Location', '/host/v2/');
    });

    it("answers unknown versions with the 404 error body, not the host's next middleware", async () => {
      const res = await hosted('/host/v3/messages/1').expect(404).expect('Content-Type', JSON_TYPE);
      assert.deepEqual(res.body, UNKNOWN_PREFIX);
      await hosted('/host/v1/nothing').expect(404);
      assert.equal(fellThrough, 0);
      await hosted('/elsewhere').expect(200, 'host');
      assert.equal(fellThrough, 1);
    });
  });

  describe('behind a proxy', () => {
    const forwarded = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'public.test' };

    it('ignores X-Forwarded-* by default', async () => {
      const res = await get('/v1/messages/1').set(forwarded).expect(200);
      assert.equal(res.body.url, `http://${HOST}/v1/messages/1`);
    });

    it('builds urls from X-Forwarded-* when told to trust a proxy', async () => {
      const res = await request(createApiApp({ proxy: true }).callback())
        .get('/v1/messages/1')
        .set(forwarded)
        .expect(200);
      assert.equal(res.body.url, 'https://public.test/v1/messages/1');
    });
  });

  describe('createApiModule', () => {
    it('is the module named api, whose app is the dispatcher', async () => {
      const module = createApiModule();
      assert.equal(module.name, 'api');
      assert.ok(module.app instanceof Koa);
      const res = await request(module.app.callback()).get('/v2/messages/1').set('Host', HOST).expect(200);
      assert.equal(res.body.url, `http://${HOST}/v2/messages/1`);
      await request(module.app.callback()).get('/v3/messages/1').expect(404);
    });

    it('answers every path routed in process by the gateway as its app alone does', async () => {
      const module = createApiModule();
      assert.deepEqual(Object.keys(module.mounts ?? {}), ['/v1', '/v2']);
      const gateway = createGateway({
        modules: registry(module),
        config: configOf(mapping('/', 'api', { name: 'api', rewrite: '' })),
      });
      try {
        const asks: [string, string][] = [
          ['GET', '/v1/messages/1'],
          ['GET', '/v2/messages/1?fields=id,content'],
          ['GET', '/v1/messages/?account_id=2'],
          ['GET', '/v1'],
          ['GET', '/v2?x=1'],
          ['GET', '/v1/'],
          ['GET', '/v1/messages/404'],
          ['GET', '/v1/messages/1?nope=1'],
          ['GET', '/v2/nothing/here'],
          ['GET', '/v3/messages/1'],
          ['GET', '/v1x/messages/1'],
          ['DELETE', '/v1/messages/1'],
          ['OPTIONS', '/v2/messages/'],
        ];
        for (const [method, path] of asks) {
          const ask = (app: Koa) => request(app.callback())[method.toLowerCase() as 'get'](path).set('Host', HOST);
          const alone = await ask(module.app!);
          const routed = await ask(gateway.app);
          const seen = (res: request.Response) => [
            res.status,
            res.headers['content-type'],
            res.headers.allow,
            res.headers.location,
            res.text,
          ];
          assert.deepEqual(seen(routed), seen(alone), `${method} ${path}`);
        }
      } finally {
        await gateway.close();
      }
    });
  });
});
