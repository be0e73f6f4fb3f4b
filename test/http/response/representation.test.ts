/**
 * @module test/http/response/representation
 * Response bodies in the representation Accept chose, through createServiceApp.
 */
import assert from 'node:assert/strict';
import Koa from 'koa';
import request from 'supertest';
import {
  createFormatterRegistry,
  createServiceApp,
  jsonFormatter,
  representation,
  type Formatter,
} from '../../../src/http';

function appAnswering(handler: Koa.Middleware): Koa {
  const app = createServiceApp();
  app.use(handler);
  return app;
}

describe('http/response/representation', () => {
  const object = appAnswering((ctx) => {
    ctx.body = { id: '1', tags: ['a', 'b'] };
  });

  it('writes objects as JSON by default, with a charset and Vary: Accept', async () => {
    const res = await request(object.callback())
      .get('/')
      .expect(200)
      .expect('Content-Type', 'application/json; charset=utf-8')
      .expect('Vary', 'Accept');
    assert.equal(res.text, '{"id":"1","tags":["a","b"]}');
  });

  it('writes XML when XML is asked for', async () => {
    const res = await request(object.callback())
      .get('/')
      .set('Accept', 'application/xml')
      .expect(200)
      .expect('Content-Type', 'application/xml')
      .expect('Vary', 'Accept');
    assert.equal(
      res.text,
      '<?xml version="1.0" encoding="UTF-8"?>\n<response><id>1</id><tags><item>a</item><item>b</item></tags></response>',
    );
  });

  it('answers 406 listing the supported types when nothing is acceptable, before the handler runs', async () => {
    let ran = false;
    const app = appAnswering((ctx) => {
      ran = true;
      ctx.body = {};
    });
    const res = await request(app.callback()).get('/').set('Accept', 'text/html').expect(406).expect('Vary', 'Accept');
    assert.deepEqual(res.body, {
      code: 406,
      message: '406: Not Acceptable',
      detail: 'supported types: application/json, application/xml',
    });
    assert.equal(ran, false);
  });

  it('keeps the status the handler chose', async () => {
    const app = appAnswering((ctx) => {
      ctx.status = 201;
      ctx.body = { created: true };
    });
    await request(app.callback()).post('/').expect(201, { created: true });
  });

  it('leaves strings and buffers as they are', async () => {
    const text = appAnswering((ctx) => {
      ctx.body = '<p>hi</p>';
    });
    await request(text.callback())
      .get('/')
      .expect(200)
      .expect('Content-Type', 'text/html; charset=utf-8')
      .expect('<p>hi</p>');
    const bytes = appAnswering((ctx) => {
      ctx.body = Buffer.from('raw');
    });
    await request(bytes.callback()).get('/').expect(200).expect('Content-Type', 'application/octet-stream');
  });

  it('uses the formatters it is given', async () => {
    const csv: Formatter = { type: 'text/csv', format: (body) => Object.values(body as object).join(',') };
    const app = new Koa();
    app.use(representation({ formatters: createFormatterRegistry([csv, jsonFormatter]) }));
    app.use((ctx) => {
      ctx.body = { a: 1, b: 2 };
    });
    await request(app.callback()).get('/').expect(200).expect('Content-Type', 'text/csv; charset=utf-8').expect('1,2');
    await request(app.callback()).get('/').set('Accept', 'application/json').expect(200, { a: 1, b: 2 });
  });
});
