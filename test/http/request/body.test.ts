/**
 * @module test/http/request/body
 * readJson: the JSON body of a request, with 415, 413 and 400 for what it
 * cannot take.
 */
import assert from 'node:assert/strict';
import Koa from 'koa';
import request from 'supertest';
import { createServiceApp, readJson } from '../../../src/http';

/** An app that echoes the JSON it reads, with a 64-byte limit. */
function echoApp(): Koa {
  const app = createServiceApp();
  app.use(async (ctx) => {
    ctx.body = { received: await readJson(ctx, 64) };
  });
  return app;
}

describe('http/request/body', () => {
  it('reads a JSON body', async () => {
    await request(echoApp().callback())
      .post('/')
      .send({ a: [1, 2] })
      .expect(200, { received: { a: [1, 2] } });
  });

  it('reads a +json media type', async () => {
    await request(echoApp().callback())
      .patch('/')
      .set('Content-Type', 'application/merge-patch+json')
      .send('{"a":null}')
      .expect(200, { received: { a: null } });
  });

  it('answers 415 for another media type', async () => {
    const res = await request(echoApp().callback())
      .post('/')
      .set('Content-Type', 'text/plain')
      .send('{"a":1}')
      .expect(415);
    assert.deepEqual(res.body, {
      code: 415,
      message: '415: Unsupported Media Type',
      detail: 'the request body must be application/json',
    });
  });

  it('answers 415 for a body without a Content-Type', async () => {
    await request(echoApp().callback())
      .post('/')
      .set('Content-Length', '7')
      .send(Buffer.from('{"a":1}'))
      .unset('Content-Type')
      .expect(415);
  });

  it('answers 415 for a compressed body, which it does not decode', async () => {
    const res = await request(echoApp().callback())
      .post('/')
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send('{"a":1}')
      .expect(415);
    assert.equal(res.body.detail, "content encoding 'gzip' is not supported");
  });

  it('reads a body that says it is UTF-8, in any spelling', async () => {
    for (const charset of ['utf-8', 'UTF-8', 'utf8']) {
      await request(echoApp().callback())
        .post('/')
        .set('Content-Type', `application/json; charset=${charset}`)
        .send('{"a":"é"}')
        .expect(200, { received: { a: 'é' } });
    }
  });

  it('answers 415 for a body in another charset, which it would read wrongly as UTF-8', async () => {
    const res = await request(echoApp().callback())
      .post('/')
      .set('Content-Type', 'application/json; charset=iso-8859-1')
      .send(Buffer.from('{"a":"\xe9"}', 'latin1'))
      .expect(415);
    assert.deepEqual(res.body, {
      code: 415,
      message: '415: Unsupported Media Type',
      detail: "charset 'iso-8859-1' is not supported: JSON is sent in UTF-8",
    });
  });

  it('answers 400 when there is no body at all', async () => {
    const res = await request(echoApp().callback()).post('/').expect(400);
    assert.equal(res.body.detail, 'a JSON request body is required');
  });

  it('answers 413 for a body over the limit that declares its length', async () => {
    const res = await request(echoApp().callback())
      .post('/')
      .send({ text: 'x'.repeat(100) })
      .expect(413);
    assert.deepEqual(res.body, {
      code: 413,
      message: '413: Payload Too Large',
      detail: 'the request body is larger than 64 bytes',
    });
  });

  it('answers 413 for a chunked body over the limit', async () => {
    const app = echoApp();
    const req = request(app.callback())
      .post('/')
      .set('Content-Type', 'application/json')
      .set('Transfer-Encoding', 'chunked');
    req.write('{"text":"');
    req.write('x'.repeat(100));
    req.write('"}');
    const res = await req.expect(413);
    assert.equal(res.body.code, 413);
  });

  it('answers 400 for a body that is not JSON', async () => {
    const res = await request(echoApp().callback())
      .post('/')
      .set('Content-Type', 'application/json')
      .send('{"a":')
      .expect(400);
    assert.deepEqual(res.body, {
      code: 400,
      message: '400: Bad Request',
      detail: 'the request body is not valid JSON',
    });
  });

  it('answers 400 for an empty body, whatever its type', async () => {
    const json = await request(echoApp().callback())
      .post('/')
      .set('Content-Type', 'application/json')
      .send('')
      .expect(400);
    assert.equal(json.body.detail, 'a JSON request body is required');
    const text = await request(echoApp().callback()).post('/').set('Content-Type', 'text/plain').send('').expect(400);
    assert.equal(text.body.detail, 'a JSON request body is required');
  });

  it('answers 400 for an empty chunked body', async () => {
    const req = request(echoApp().callback())
      .post('/')
      .set('Content-Type', 'application/json')
      .set('Transfer-Encoding', 'chunked');
    const res = await req.expect(400);
    assert.equal(res.body.detail, 'the request body is not valid JSON');
  });

  describe('nesting', () => {
    /** An app that reads bodies up to its 1 MiB default. */
    function roomyApp(maxDepth?: number): Koa {
      const app = createServiceApp();
      app.use(async (ctx) => {
        const value = await readJson(ctx, undefined, maxDepth);
        ctx.body = { depth: JSON.stringify(value).match(/^\[*/)![0].length };
      });
      return app;
    }
    const post = (app: Koa, text: string) =>
      request(app.callback()).post('/').set('Content-Type', 'application/json').send(text);

    it('answers 400 for a body nesting deeper than 64 levels, before parsing it (a MiB of brackets took JSON.parse 300 ms)', async () => {
      const res = await post(roomyApp(), '['.repeat(500_000) + ']'.repeat(500_000)).expect(400);
      assert.deepEqual(res.body, {
        code: 400,
        message: '400: Bad Request',
        detail: 'the request body nests arrays and objects deeper than 64 levels',
      });
      await post(roomyApp(), `${'{"a":'.repeat(65)}1${'}'.repeat(65)}`).expect(400);
    });

    it('reads 64 levels, or as many as it is told', async () => {
      await post(roomyApp(), '['.repeat(64) + ']'.repeat(64)).expect(200, { depth: 64 });
      await post(roomyApp(1000), '['.repeat(1000) + ']'.repeat(1000)).expect(200, { depth: 1000 });
    });

    it('counts no bracket inside a string, escaped quotes and all', async () => {
      const text = JSON.stringify([{ a: `"\\${'['.repeat(200)}`, b: '{'.repeat(200) }]);
      await post(roomyApp(), text).expect(200, { depth: 1 });
    });
  });
});
