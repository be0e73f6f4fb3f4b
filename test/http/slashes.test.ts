/**
 * @module test/http/slashes
 * Canonical collection paths: the slashless spelling redirects to the slash,
 * with the method-keeping status, the mount prefix and the query string.
 */
import assert from 'node:assert/strict';
import Koa from 'koa';
import mount from 'koa-mount';
import Router from 'koa-router';
import request from 'supertest';
import { createServiceApp, redirectToSlash } from '../../src/http';

function thingsApp(): Koa {
  const app = createServiceApp();
  const router = new Router({ strict: true });
  router.get('/things/', (ctx) => {
    ctx.body = { items: [] };
  });
  router.all('/things', redirectToSlash);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

describe('http/slashes', () => {
  it('redirects GET with 301 to the path with a slash', async () => {
    await request(thingsApp().callback()).get('/things').expect(301).expect('Location', '/things/');
  });

  it('redirects HEAD with 301', async () => {
    await request(thingsApp().callback()).head('/things').expect(301).expect('Location', '/things/');
  });

  for (const method of ['post', 'put', 'patch', 'delete'] as const) {
    it(`redirects ${method.toUpperCase()} with 308, which keeps the method and body`, async () => {
      await request(thingsApp().callback())
        [method]('/things')
        .send({ a: 1 })
        .expect(308)
        .expect('Location', '/things/');
    });
  }

  it('keeps the query string', async () => {
    await request(thingsApp().callback())
      .get('/things?offset=20&q=a%20b')
      .expect(301)
      .expect('Location', '/things/?offset=20&q=a%20b');
  });

  it('keeps every mount prefix', async () => {
    const inner = new Koa();
    inner.use(mount('/v1', thingsApp()));
    const host = new Koa();
    host.use(mount('/host', inner));
    await request(host.callback())
      .get('/host/v1/things?limit=5')
      .expect(301)
      .expect('Location', '/host/v1/things/?limit=5');
  });

  it('answers with no body, whatever Accept asks for, and varies on Accept as the collection it points to does', async () => {
    const app = new Koa();
    app.use(redirectToSlash);
    for (const accept of ['text/html', 'application/json', 'application/xml']) {
      const res = await request(app.callback())
        .get('/things')
        .set('Accept', accept)
        .expect(301)
        .expect('Vary', 'Accept')
        .expect('Location', '/things/');
      assert.equal(res.text, '', accept);
      assert.equal(res.headers['content-type'], undefined, accept);
    }
    await request(thingsApp().callback()).get('/things').expect(301).expect('Vary', 'Accept');
  });

  it('answers the canonical path itself', async () => {
    const res = await request(thingsApp().callback()).get('/things/').expect(200);
    assert.deepEqual(res.body, { items: [] });
  });

  it('does not redirect other spellings', async () => {
    await request(thingsApp().callback()).get('/things//').expect(404);
    await request(thingsApp().callback()).get('//things').expect(404);
  });
});
