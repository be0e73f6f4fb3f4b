import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import Koa from 'koa';
import request from 'supertest';
import { errorHandler, HttpError, markCutShort } from '../../src/http';
import {
  accessLog,
  createLogger,
  createMetrics,
  createRouteCounters,
  rejectedRequestLog,
  type AccessLogOptions,
} from '../../src/telemetry';
import { captureLog } from '../support/log-capture';

/** An app shaped like the gateway: access log, error handler, then a handler per path. */
function gatewayLike(handle: Koa.Middleware, options: Partial<AccessLogOptions> = {}, withErrorHandler = true) {
  const out = captureLog();
  const logger = createLogger({ destination: out, level: 'info' });
  const metrics = createMetrics({ processMetrics: false });
  const counters = createRouteCounters();
  const app = new Koa();
  app.silent = true;
  app.use(accessLog({ logger, metrics, counters, ...options }));
  if (withErrorHandler) app.use(errorHandler({ onUnexpected: () => {} }));
  app.use(handle);
  return { app, out, metrics, counters };
}

const hotels = { name: 'hotels', prefix: '/v1/hotels/' };

describe('telemetry/access-log', () => {
  it('writes one line per request with method, path, route, status, duration, remote and request id', async () => {
    const { app, out } = gatewayLike((ctx) => {
      ctx.state.mapping = hotels;
      ctx.body = { ok: true };
    });
    const res = await request(app.callback()).get('/v1/hotels/?city=Paris&limit=2').expect(200);
    const [line] = await out.requests(1);
    assert.equal(out.lines.length, 1);
    assert.equal(line.msg, 'request');
    assert.equal(line.method, 'GET');
    assert.equal(line.path, '/v1/hotels/');
    assert.deepEqual(line.query, ['city', 'limit']);
    assert.equal(line.route, 'hotels');
    assert.equal(line.status, 200);
    assert.equal(typeof line.duration_ms, 'number');
    assert.ok((line.duration_ms as number) >= 0);
    assert.match(String(line.remote), /127\.0\.0\.1/);
    assert.match(String(line.req_id), /^[0-9a-f-]{36}$/);
    assert.equal(res.headers['x-request-id'], line.req_id);
  });

  it('never logs the Authorization header, cookies or query values', async () => {
    const { app, out } = gatewayLike((ctx) => {
      ctx.body = 'ok';
    });
    await request(app.callback())
      .get('/login?password=hunter2&token=abcdef')
      .set('Authorization', 'Basic YWxpY2U6aHVudGVyMg==')
      .set('Cookie', 'session=zzz')
      .expect(200);
    const [line] = await out.requests(1);
    const text = out.raw.join('\n');
    for (const secret of ['hunter2', 'abcdef', 'YWxpY2U6aHVudGVyMg', 'zzz', 'Basic']) {
      assert.ok(!text.includes(secret), `${secret} in ${text}`);
    }
    assert.deepEqual(line.query, ['password', 'token']);
  });

  it('leaves the logger it was given censoring credentials in every other line', async () => {
    const out = captureLog();
    const logger = createLogger({ destination: out, level: 'info' });
    const app = new Koa();
    app.use(accessLog({ logger }));
    app.use((ctx) => {
      logger.info({ headers: ctx.req.headers, authorization: ctx.get('authorization') }, 'handler');
      ctx.body = 'ok';
    });
    await request(app.callback()).get('/').set('Authorization', 'Basic YWxpY2U6aHVudGVyMg==').expect(200);
    await out.requests(1);
    assert.deepEqual(
      out.lines.map((l) => l.msg),
      ['handler', 'request'],
    );
    const [handler] = out.lines;
    assert.equal(handler.authorization, '[redacted]');
    assert.equal((handler.headers as Record<string, unknown>).authorization, '[redacted]');
    assert.ok(!out.raw.join('\n').includes('YWxpY2U6aHVudGVyMg'));
  });

  it('logs the user that auth set on the request, not one the response names', async () => {
    const { app, out } = gatewayLike((ctx) => {
      // As the auth stage does after a successful check.
      ctx.request.headers['x-travel-user'] = 'alice';
      ctx.set('X-Travel-User', 'mallory');
      ctx.body = 'ok';
    });
    await request(app.callback()).get('/v1/hotels/').expect(200);
    const [line] = await out.requests(1);
    assert.equal(line.user, 'alice');
  });

  it('logs a user name in UTF-8 as its text, not as one character per byte', async () => {
    const { app, out } = gatewayLike((ctx) => {
      // The auth service sends a name's UTF-8 bytes, which Node reads one character each.
      ctx.request.headers['x-travel-user'] = Buffer.from('jürgen', 'utf8').toString('latin1');
      ctx.body = 'ok';
    });
    await request(app.callback()).get('/v1/hotels/').expect(200);
    const [line] = await out.requests(1);
    assert.equal(line.user, 'jürgen');
  });

  it('leaves the user out when there is none', async () => {
    const { app, out } = gatewayLike((ctx) => {
      ctx.body = 'ok';
    });
    await request(app.callback()).get('/').expect(200);
    const [line] = await out.requests(1);
    assert.equal('user' in line, false);
  });

  it('logs the status the error handler answered with when a handler throws', async () => {
    const { app, out, counters } = gatewayLike((ctx) => {
      ctx.state.mapping = hotels;
      throw new Error('boom');
    });
    const res = await request(app.callback()).get('/v1/hotels/').expect(500);
    const [line] = await out.requests(1);
    assert.equal(res.body.code, 500);
    assert.equal(line.status, 500);
    assert.equal(line.route, 'hotels');
    assert.deepEqual(counters.get('hotels'), { requests: 1, clientErrors: 0, errors: 1 });
  });

  it('still logs, with the error status, when an error escapes every handler', async () => {
    const { app, out } = gatewayLike(
      () => {
        throw new HttpError(503, 'down');
      },
      {},
      false,
    );
    await request(app.callback()).get('/x').expect(503);
    const [line] = await out.requests(1);
    assert.equal(out.lines.length, 1);
    assert.equal(line.status, 503);
  });

  it("names the registry's error an answer was in error, and nothing on any other answer", async () => {
    const { app, out } = gatewayLike((ctx) => {
      if (ctx.path === '/limit') throw HttpError.of('LIMIT_NOT_INTEGER');
      if (ctx.path === '/own') throw new HttpError(409, 'an app of its own');
      if (ctx.path === '/nowhere') return;
      ctx.body = { ok: true };
    });
    const res = await request(app.callback()).get('/limit').expect(400);
    assert.deepEqual(res.body, { code: 400, message: '400: Bad Request', detail: 'limit must be a positive integer' });
    await request(app.callback()).get('/own').expect(409);
    await request(app.callback()).get('/nowhere').expect(404);
    await request(app.callback()).get('/ok').expect(200);
    assert.deepEqual(
      (await out.requests(4)).map((line) => [line.path, line.status, line.error]),
      [
        ['/limit', 400, 'LIMIT_NOT_INTEGER'],
        ['/own', 409, undefined],
        ['/nowhere', 404, 'NOT_FOUND'],
        ['/ok', 200, undefined],
      ],
    );
  });

  it('names an exception nothing expected INTERNAL_ERROR', async () => {
    const { app, out } = gatewayLike(() => {
      throw new Error('a bug');
    });
    await request(app.callback()).get('/x').expect(500);
    const [line] = await out.requests(1);
    assert.equal(line.error, 'INTERNAL_ERROR');
  });

  it("names the registry's error that escaped every handler", async () => {
    const { app, out } = gatewayLike(
      () => {
        throw HttpError.of('BODY_TOO_LARGE', { limit: 16 });
      },
      {},
      false,
    );
    await request(app.callback()).get('/x').expect(413);
    const [line] = await out.requests(1);
    assert.equal(line.error, 'BODY_TOO_LARGE');
  });

  it('names requests that matched no mapping as unmatched', async () => {
    const { app, out, counters, metrics } = gatewayLike(() => {});
    await request(app.callback()).get('/nowhere').expect(404);
    const [line] = await out.requests(1);
    assert.equal(line.route, 'unmatched');
    assert.equal(line.status, 404);
    assert.deepEqual(counters.get('unmatched'), { requests: 1, clientErrors: 1, errors: 0 });
    assert.match(
      await metrics.registry.metrics(),
      /http_requests_total\{route="unmatched",method="GET",status="404",protocol="HTTP\/1\.1"\} 1/,
    );
  });

  it('reads the method and path before routing rewrites them', async () => {
    const { app, out } = gatewayLike((ctx) => {
      ctx.path = '/rewritten';
      ctx.method = 'POST';
      ctx.body = 'ok';
    });
    await request(app.callback()).get('/v1/cars/').expect(200);
    const [line] = await out.requests(1);
    assert.equal(line.path, '/v1/cars/');
    assert.equal(line.method, 'GET');
  });

  it('keeps a well-formed X-Request-Id and hands it on', async () => {
    let seen: string | undefined;
    const { app, out } = gatewayLike((ctx) => {
      seen = ctx.get('x-request-id');
      ctx.body = 'ok';
    });
    const res = await request(app.callback()).get('/').set('X-Request-Id', 'abc-123').expect(200);
    const [line] = await out.requests(1);
    assert.equal(seen, 'abc-123');
    assert.equal(res.headers['x-request-id'], 'abc-123');
    assert.equal(line.req_id, 'abc-123');
  });

  it('replaces a malformed X-Request-Id with a new one and hands that on', async () => {
    let seen: string | undefined;
    const { app, out } = gatewayLike((ctx) => {
      seen = ctx.get('x-request-id');
      ctx.body = 'ok';
    });
    const res = await request(app.callback()).get('/').set('X-Request-Id', 'a b"c').expect(200);
    const [line] = await out.requests(1);
    assert.match(String(line.req_id), /^[0-9a-f-]{36}$/);
    assert.equal(seen, line.req_id);
    assert.equal(res.headers['x-request-id'], line.req_id);
  });

  it('takes an X-Request-Id the client made hop-by-hop for none: a new id, off the Connection list, is handed on', async () => {
    let seen: { id: string; connection: string | undefined } | undefined;
    const { app, out } = gatewayLike((ctx) => {
      seen = { id: ctx.get('x-request-id'), connection: ctx.req.headers.connection };
      ctx.body = 'ok';
    });
    const res = await request(app.callback())
      .get('/')
      .set('X-Request-Id', 'abc-123')
      .set('Connection', 'keep-alive, X-Request-Id, X-Debug')
      .expect(200);
    const [line] = await out.requests(1);
    assert.match(String(line.req_id), /^[0-9a-f-]{36}$/);
    assert.deepEqual(seen, { id: line.req_id, connection: 'keep-alive, X-Debug' });
    assert.equal(res.headers['x-request-id'], line.req_id);
  });

  it('logs and counts a request the server answered itself as unmatched, with - for what it could not read', async () => {
    const out = captureLog();
    const metrics = createMetrics({ processMetrics: false });
    const counters = createRouteCounters();
    const log = rejectedRequestLog({ logger: createLogger({ destination: out, level: 'info' }), metrics, counters });
    log({ status: 431, remote: '10.0.0.7' });
    log({ status: 501, method: 'CONNECT', target: 'db.internal:5432', remote: '10.0.0.8' });
    const lines = await out.waitFor(2);
    assert.deepEqual(
      lines.map((l) => [l.method, l.path, l.route, l.status, l.remote, l.duration_ms]),
      [
        ['-', '-', 'unmatched', 431, '10.0.0.7', 0],
        ['CONNECT', 'db.internal:5432', 'unmatched', 501, '10.0.0.8', 0],
      ],
    );
    assert.notEqual(lines[0].req_id, lines[1].req_id);
    assert.deepEqual(counters.get('unmatched'), { requests: 2, clientErrors: 1, errors: 1 });
    const text = await metrics.registry.metrics();
    assert.match(
      text,
      /gatehouse_http_requests_total\{route="unmatched",method="OTHER",status="431",protocol="HTTP\/1\.1"\} 1/,
    );
    assert.match(
      text,
      /gatehouse_http_requests_total\{route="unmatched",method="CONNECT",status="501",protocol="HTTP\/1\.1"\} 1/,
    );
  });

  it("names the registry's error a request the server answered itself was", async () => {
    const out = captureLog();
    const log = rejectedRequestLog({ logger: createLogger({ destination: out, level: 'info' }) });
    log({ status: 431, remote: '10.0.0.7' }, 'TOO_MANY_HEADERS');
    log({ status: 400, remote: '10.0.0.8' });
    const lines = await out.waitFor(2);
    assert.deepEqual(
      lines.map((l) => [l.status, l.error]),
      [
        [431, 'TOO_MANY_HEADERS'],
        [400, undefined],
      ],
    );
  });

  it('counts requests, client errors and server errors per route and in total', async () => {
    let status = 200;
    const { app, counters, metrics } = gatewayLike((ctx) => {
      ctx.state.mapping = hotels;
      ctx.status = status;
      ctx.body = 'x';
    });
    for (const s of [200, 201, 401, 429, 502]) {
      status = s;
      await request(app.callback()).get('/v1/hotels/').expect(s);
    }
    assert.deepEqual(counters.get('hotels'), { requests: 5, clientErrors: 2, errors: 1 });
    assert.deepEqual(counters.get('cars'), { requests: 0, clientErrors: 0, errors: 0 });
    assert.deepEqual(counters.totals(), { requests: 5, clientErrors: 2, errors: 1 });
    const text = await metrics.registry.metrics();
    assert.match(text, /http_requests_total\{route="hotels",method="GET",status="429",protocol="HTTP\/1\.1"\} 1/);
    assert.match(text, /http_request_duration_seconds_count\{route="hotels",method="GET"\} 5/);
  });

  it('writes nothing but still counts when the logger is silent', async () => {
    const counters = createRouteCounters();
    const app = new Koa();
    app.use(accessLog({ logger: createLogger({ level: 'silent' }), counters }));
    app.use((ctx) => {
      ctx.body = 'ok';
    });
    await request(app.callback()).get('/').expect(200);
    assert.equal(counters.totals().requests, 1);
  });

  it('logs and counts 499, as nginx does, a request whose client left before any answer, not the 404 Koa starts with', async () => {
    let left!: () => void;
    let entered!: () => void;
    const gone = new Promise<void>((resolve) => (left = resolve));
    const waiting = new Promise<void>((resolve) => (entered = resolve));
    const { app, out, metrics, counters } = gatewayLike(async (ctx) => {
      ctx.state.mapping = hotels;
      entered();
      // A slow upstream: the handler gives up once the client is gone, as the proxy does.
      await new Promise((resolve) => ctx.res.once('close', resolve));
      left();
    });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const req = http.get({ host: '127.0.0.1', port, path: '/v1/hotels/slow' });
      req.on('error', () => undefined);
      await waiting;
      req.destroy();
      await gone;
      const [line] = await out.waitFor(1);
      assert.equal(line.aborted, true);
      assert.equal(line.status, 499);
      assert.match(
        await metrics.registry.metrics(),
        /http_requests_total\{route="hotels",method="GET",status="499",protocol="HTTP\/1\.1"\} 1/,
      );
      assert.deepEqual(counters.get('hotels'), { requests: 1, clientErrors: 1, errors: 0 });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  describe('with a streamed body', () => {
    let server: http.Server;
    let body: PassThrough;
    let out: ReturnType<typeof captureLog>;

    before(async () => {
      const built = gatewayLike((ctx) => {
        ctx.state.mapping = hotels;
        body = new PassThrough();
        ctx.status = 200;
        ctx.type = 'text/plain';
        ctx.body = body;
        body.write('first ');
        if (ctx.query.cut !== undefined) markCutShort(ctx.res, 'upstream');
      });
      out = built.out;
      server = http.createServer(built.app.callback());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    after(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    function get(query = ''): Promise<http.IncomingMessage> {
      const { port } = server.address() as AddressInfo;
      return new Promise((resolve, reject) => {
        http.get({ host: '127.0.0.1', port, path: `/v1/hotels/stream${query}` }, resolve).on('error', reject);
      });
    }

    it('logs once the body has been sent, not when the headers were', async () => {
      const res = await get();
      assert.equal(res.statusCode, 200);
      assert.equal(out.lines.length, 0, 'nothing logged while the body is under way');
      const done = new Promise<string>((resolve) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (c: string) => (text += c))
          .on('end', () => resolve(text));
      });
      body.end('last');
      assert.equal(await done, 'first last');
      const [line] = await out.waitFor(1);
      assert.equal(line.status, 200);
      assert.equal(line.route, 'hotels');
      assert.equal('aborted' in line, false);
    });

    it('marks the line aborted when the client leaves before the end', async () => {
      out.lines.length = 0;
      const res = await get();
      res.destroy();
      const [line] = await out.waitFor(1);
      assert.equal(line.aborted, true);
      assert.equal(line.status, 200);
      body.destroy();
    });

    it('marks the line upstream_reset, not aborted, when where the body came from cut it short', async () => {
      out.lines.length = 0;
      const res = await get('?cut');
      res.on('error', () => {});
      body.destroy(new Error('the upstream hung up'));
      const [line] = await out.waitFor(1);
      assert.equal(line.upstream_reset, true);
      assert.equal('aborted' in line, false);
      assert.equal(line.status, 200);
    });
  });
});
