/**
 * @module test/http/error-handler
 * The catch-all error middleware: thrown errors, returned error statuses,
 * koa's `ctx.throw`, what a 500 hides and how errors are represented.
 */
import assert from 'node:assert/strict';
import Koa from 'koa';
import Router from 'koa-router';
import request from 'supertest';
import { createServiceApp, errorHandler, HttpError, type ServiceAppOptions } from '../../src/http';

const JSON_TYPE = 'application/json; charset=utf-8';

/** A service app whose `/boom` runs `handler`. */
function appWith(handler: Koa.Middleware, options: ServiceAppOptions = {}): Koa {
  const app = createServiceApp(options);
  const router = new Router({ strict: true });
  router.get('/boom', handler);
  router.get('/ok', (ctx) => {
    ctx.body = { ok: true };
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

describe('http/error-handler', () => {
  describe('thrown HttpError', () => {
    it('answers with its status and the error body in JSON', async () => {
      const res = await request(
        appWith(() => {
          throw new HttpError(409, 'the booking is already cancelled');
        }).callback(),
      )
        .get('/boom')
        .expect(409)
        .expect('Content-Type', JSON_TYPE);
      assert.deepEqual(res.body, { code: 409, message: '409: Conflict', detail: 'the booking is already cancelled' });
    });

    it('leaves detail out when there is none', async () => {
      const res = await request(
        appWith(() => {
          throw new HttpError(403);
        }).callback(),
      )
        .get('/boom')
        .expect(403);
      assert.deepEqual(res.body, { code: 403, message: '403: Forbidden' });
    });

    it('sends the headers it carries', async () => {
      const app = appWith(() => {
        throw new HttpError(401, undefined, { headers: { 'WWW-Authenticate': 'Basic realm="x"' } });
      });
      await request(app.callback()).get('/boom').expect(401).expect('WWW-Authenticate', 'Basic realm="x"');
    });

    it('sends its info_url', async () => {
      const app = appWith(() => {
        throw new HttpError(429, undefined, { infoUrl: 'https://example.test/limits' });
      });
      const res = await request(app.callback()).get('/boom').expect(429);
      assert.deepEqual(res.body, {
        code: 429,
        message: '429: Too Many Requests',
        info_url: 'https://example.test/limits',
      });
    });

    it('shows the detail of a 5xx HttpError, which was written to be shown', async () => {
      const seen: unknown[] = [];
      const app = appWith(
        () => {
          throw new HttpError(502, 'the upstream closed the connection');
        },
        { onUnexpected: (e) => seen.push(e) },
      );
      const res = await request(app.callback()).get('/boom').expect(502);
      assert.equal(res.body.detail, 'the upstream closed the connection');
      assert.equal(seen.length, 0);
    });
  });

  describe('an info_url option', () => {
    it('adds info_url by status', async () => {
      const app = appWith(
        () => {
          throw new HttpError(400);
        },
        { infoUrl: (s) => (s === 400 ? 'https://example.test/400' : undefined) },
      );
      const bad = await request(app.callback()).get('/boom').expect(400);
      assert.equal(bad.body.info_url, 'https://example.test/400');
      const missing = await request(app.callback()).get('/nothing').expect(404);
      assert.equal(missing.body.info_url, undefined);
    });
  });

  describe('an error status returned without a body', () => {
    it("gives koa's default 404 the error body", async () => {
      const res = await request(appWith(() => {}).callback())
        .get('/nothing')
        .expect(404)
        .expect('Content-Type', JSON_TYPE);
      assert.deepEqual(res.body, { code: 404, message: '404: Not Found' });
    });

    it('gives a status set by a handler the error body', async () => {
      const res = await request(
        appWith((ctx) => {
          ctx.status = 410;
        }).callback(),
      )
        .get('/boom')
        .expect(410);
      assert.deepEqual(res.body, { code: 410, message: '410: Gone' });
    });

    it("gives the router's 405 the error body and keeps its Allow header", async () => {
      const res = await request(appWith(() => {}).callback())
        .delete('/ok')
        .expect(405)
        .expect('Allow', 'HEAD, GET');
      assert.deepEqual(res.body, { code: 405, message: '405: Method Not Allowed' });
    });

    it('keeps a body a handler wrote itself', async () => {
      const res = await request(
        appWith((ctx) => {
          ctx.status = 418;
          ctx.body = { teapot: true };
        }).callback(),
      )
        .get('/boom')
        .expect(418);
      assert.deepEqual(res.body, { teapot: true });
    });
  });

  describe('http-errors from ctx.throw', () => {
    it('answers ctx.throw(404) with the plain error body', async () => {
      const res = await request(appWith((ctx) => ctx.throw(404)).callback())
        .get('/boom')
        .expect(404);
      assert.deepEqual(res.body, { code: 404, message: '404: Not Found' });
    });

    it('shows the message of a 4xx as detail', async () => {
      const res = await request(appWith((ctx) => ctx.throw(400, 'limit must be a positive integer')).callback())
        .get('/boom')
        .expect(400);
      assert.deepEqual(res.body, {
        code: 400,
        message: '400: Bad Request',
        detail: 'limit must be a positive integer',
      });
    });

    it('sends the headers given to ctx.throw', async () => {
      const app = appWith((ctx) =>
        ctx.throw(401, 'credentials required', { headers: { 'WWW-Authenticate': 'Basic' } }),
      );
      const res = await request(app.callback()).get('/boom').expect(401).expect('WWW-Authenticate', 'Basic');
      assert.equal(res.body.detail, 'credentials required');
    });
  });

  describe('unexpected errors', () => {
    const secret = 'password=hunter2 at /srv/app/db.ts';

    for (const [what, handler] of [
      [
        'an Error',
        () => {
          throw new Error(secret);
        },
      ],
      ['ctx.throw(500, message)', (ctx: Koa.Context) => ctx.throw(500, secret)],
      ['ctx.throw(503, message)', (ctx: Koa.Context) => ctx.throw(503, secret)],
      [
        'a thrown string',
        () => {
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- the case under test
          throw secret;
        },
      ],
      [
        'an error whose status is not an error status',
        () => {
          throw Object.assign(new Error(secret), { status: 302, expose: true });
        },
      ],
    ] as const) {
      it(`answers ${what} without its message or stack`, async () => {
        const seen: unknown[] = [];
        const app = appWith(handler as Koa.Middleware, { onUnexpected: (err) => seen.push(err) });
        const res = await request(app.callback()).get('/boom').expect('Content-Type', JSON_TYPE);
        assert.ok(res.status >= 500);
        assert.deepEqual(res.body, {
          code: res.status,
          message: res.status === 500 ? '500: Internal Server Error' : '503: Service Unavailable',
        });
        assert.ok(!res.text.includes('hunter2'));
        assert.equal(seen.length, 1);
      });
    }

    it('answers null thrown with a 500', async () => {
      const app = appWith(
        () => {
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- the case under test
          throw null;
        },
        { onUnexpected: () => {} },
      );
      const res = await request(app.callback()).get('/boom').expect(500);
      assert.deepEqual(res.body, { code: 500, message: '500: Internal Server Error' });
    });

    it("tells koa's error event by default", async () => {
      const app = appWith(() => {
        throw new Error(secret);
      });
      const seen: unknown[] = [];
      app.on('error', (err) => seen.push(err));
      await request(app.callback()).get('/boom').expect(500);
      assert.equal((seen[0] as Error).message, secret);
    });

    it('drops headers a handler set before it failed', async () => {
      const app = appWith(
        (ctx) => {
          ctx.set('X-Partial', 'yes');
          ctx.set('Link', '<http://x/?offset=20>; rel="next"');
          throw new Error('late');
        },
        { onUnexpected: () => {} },
      );
      const res = await request(app.callback()).get('/boom').expect(500).expect('Vary', 'Accept');
      assert.equal(res.headers['x-partial'], undefined);
      assert.equal(res.headers.link, undefined);
    });
  });

  describe('representation of errors', () => {
    it('writes XML when XML is asked for', async () => {
      const res = await request(appWith(() => {}).callback())
        .get('/nothing')
        .set('Accept', 'application/xml')
        .expect(404)
        .expect('Content-Type', /^application\/xml/)
        .expect('Vary', 'Accept');
      assert.equal(
        res.text,
        '<?xml version="1.0" encoding="UTF-8"?>\n<response><code>404</code><message>404: Not Found</message></response>',
      );
    });

    it('writes JSON when the Accept header allows nothing registered', async () => {
      const res = await request(appWith(() => {}).callback())
        .get('/nothing')
        .set('Accept', 'image/png')
        .expect(406)
        .expect('Content-Type', JSON_TYPE);
      assert.deepEqual(res.body, {
        code: 406,
        message: '406: Not Acceptable',
        detail: 'supported types: application/json, application/xml',
      });
    });

    it('works as a bare middleware in a plain Koa app', async () => {
      const app = new Koa();
      app.use(errorHandler());
      app.use(() => {
        throw new HttpError(404, 'no such thing');
      });
      const res = await request(app.callback())
        .get('/')
        .expect(404)
        .expect('Content-Type', JSON_TYPE)
        .expect('Vary', 'Accept');
      assert.deepEqual(res.body, { code: 404, message: '404: Not Found', detail: 'no such thing' });
    });
  });
});
