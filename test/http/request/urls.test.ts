/**
 * @module test/http/request/urls
 * Absolute URLs and the mount prefix in front of an app, under nested
 * koa-mount mounts, behind a gateway that recorded the client's path, and
 * behind a proxy.
 */
import assert from 'node:assert/strict';
import Koa from 'koa';
import mount from 'koa-mount';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import request from 'supertest';
import { absoluteUrl, basePath, createServiceApp, ORIGINAL_PATH, redactAddress, requestHost } from '../../../src/http';

/** An app that answers what basePath and absoluteUrl say from inside it. */
function echoApp(options: { proxy?: boolean } = {}): Koa {
  const app = createServiceApp(options);
  app.use((ctx) => {
    ctx.body = { path: ctx.path, base: basePath(ctx), self: absoluteUrl(ctx, '/things/1') };
  });
  return app;
}

function mounted(prefix: string, app: Koa): Koa {
  const parent = new Koa();
  parent.use(mount(prefix, app));
  return parent;
}

describe('http/request/urls', () => {
  describe('redactAddress', () => {
    it('hides the user, password, query and fragment of an address, and keeps the rest', () => {
      assert.equal(
        redactAddress('http://svc:hunter2@legacy.internal:8080/base'),
        'http://***@legacy.internal:8080/base',
      );
      assert.equal(
        redactAddress('https://auth.internal/check?access_token=abc123&x=1'),
        'https://auth.internal/check?***',
      );
      assert.equal(redactAddress('http://auth.internal/check#key=abc123'), 'http://auth.internal/check#***');
      assert.equal(redactAddress('grpc://u:p@rl.internal:8081?t=1\nsecond'), 'grpc://***@rl.internal:8081?***');
      assert.equal(redactAddress('ratelimit.internal:8081'), 'ratelimit.internal:8081');
      assert.equal(redactAddress('hotel-booking'), 'hotel-booking');
    });
  });

  it('has no base path at the root of a server', async () => {
    const res = await request(echoApp().callback()).get('/things/1?x=1').set('Host', 'api.example.test').expect(200);
    assert.deepEqual(res.body, { path: '/things/1', base: '', self: 'http://api.example.test/things/1' });
  });

  it('puts back the prefix a mount stripped', async () => {
    const res = await request(mounted('/v1', echoApp()).callback())
      .get('/v1/things/1')
      .set('Host', 'h.test')
      .expect(200);
    assert.deepEqual(res.body, { path: '/things/1', base: '/v1', self: 'http://h.test/v1/things/1' });
  });

  it('puts back every prefix of nested mounts', async () => {
    const app = mounted('/host', mounted('/api', mounted('/v2', echoApp())));
    const res = await request(app.callback()).get('/host/api/v2/things/?offset=3').set('Host', 'h.test').expect(200);
    assert.deepEqual(res.body, { path: '/things/', base: '/host/api/v2', self: 'http://h.test/host/api/v2/things/1' });
  });

  it('knows the prefix at the root of a mounted app, with or without a slash', async () => {
    const app = mounted('/host', mounted('/v1', echoApp()));
    const bare = await request(app.callback()).get('/host/v1').expect(200);
    assert.deepEqual([bare.body.path, bare.body.base], ['/', '/host/v1']);
    const slash = await request(app.callback()).get('/host/v1/?a=b').expect(200);
    assert.deepEqual([slash.body.path, slash.body.base], ['/', '/host/v1']);
  });

  it("uses the path a gateway recorded as the client's", async () => {
    const gateway = new Koa();
    gateway.use(async (ctx, next) => {
      ctx.state[ORIGINAL_PATH] = '/public/v1/things/1';
      ctx.path = '/v1/things/1';
      await next();
    });
    gateway.use(mount('/v1', echoApp()));
    const res = await request(gateway.callback()).get('/public//v1/./things/1').set('Host', 'h.test').expect(200);
    assert.deepEqual(res.body, { path: '/things/1', base: '/public/v1', self: 'http://h.test/public/v1/things/1' });
  });

  it("does not take the client's Origin header for its own origin", async () => {
    const res = await request(echoApp().callback())
      .get('/x')
      .set('Host', 'h.test')
      .set('Origin', 'https://evil.test')
      .expect(200);
    assert.equal(res.body.self, 'http://h.test/things/1');
  });

  it('follows X-Forwarded-Proto and -Host only when told to trust a proxy', async () => {
    const forwarded = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'public.test' };
    const trusting = await request(mounted('/v1', echoApp()).callback()).get('/v1/x').set(forwarded).expect(200);
    assert.match(
      trusting.body.self,
      /^http:\/\/127\.0\.0\.1:\d+\/v1\/things\/1$/,
      'the outer app decides, and it does not trust',
    );
    const behindProxy = new Koa({ proxy: true });
    behindProxy.use(mount('/v1', echoApp()));
    const res = await request(behindProxy.callback()).get('/v1/x').set(forwarded).expect(200);
    assert.equal(res.body.self, 'https://public.test/v1/things/1');
    const alone = await request(echoApp({ proxy: true }).callback())
      .get('/x')
      .set(forwarded)
      .expect(200);
    assert.equal(alone.body.self, 'https://public.test/things/1');
  });

  describe('requestHost', () => {
    /** A context for a request with these headers, in an app that trusts a proxy or not. */
    function contextWith(headers: Record<string, string>, proxy = false, httpVersionMajor = 1) {
      const req = { url: '/', method: 'GET', headers, httpVersionMajor, socket: {} } as unknown as IncomingMessage;
      return new Koa({ proxy }).createContext(req, {} as ServerResponse);
    }

    const hosts = [
      'api.test',
      'api.test:8080',
      '[::1]:8080',
      'a.test, b.test',
      'a.test,b.test',
      'user@a.test',
      'u:p@a.test:81',
      ' a.test',
      '',
    ];
    for (const host of hosts) {
      it(`reads Host '${host}' as Koa's ctx.host does`, () => {
        const ctx = contextWith({ host });
        assert.equal(requestHost(ctx), ctx.host);
      });
    }

    it('reads what Koa reads without a Host, behind a proxy and over HTTP/2', () => {
      for (const ctx of [
        contextWith({}),
        contextWith({ host: 'inner.test', 'x-forwarded-host': 'outer.test, proxy.test' }, true),
        contextWith({ host: 'inner.test', 'x-forwarded-host': 'outer.test' }, false),
        contextWith({ ':authority': 'h2.test', host: 'h1.test' }, false, 2),
      ]) {
        assert.equal(requestHost(ctx), ctx.host);
      }
      assert.equal(
        requestHost(contextWith({ host: 'inner.test', 'x-forwarded-host': 'outer.test, proxy.test' }, true)),
        'outer.test',
      );
    });
  });

  describe('over a real socket', () => {
    let server: http.Server;
    let port: number;

    before(async () => {
      server = http.createServer(mounted('/v1', echoApp()).callback());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });

    after(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    /** Sends a raw request line and returns the JSON body. */
    function raw(requestText: string): Promise<{ status: number; body: Record<string, string> }> {
      return new Promise((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.end(requestText));
        let data = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (data += chunk));
        socket.on('error', reject);
        socket.on('end', () => {
          const [head, body] = data.split('\r\n\r\n');
          resolve({ status: Number(head.split(' ')[1]), body: JSON.parse(body) });
        });
      });
    }

    it('reads the path of an absolute-form request target', async () => {
      const res = await raw('GET http://h.test/v1/things/1 HTTP/1.1\r\nHost: h.test\r\nConnection: close\r\n\r\n');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { path: '/things/1', base: '/v1', self: 'http://h.test/v1/things/1' });
    });

    it('names the address the request came to when it named no host, as HTTP/1.0 may not, or named an empty one', async () => {
      const res = await raw('GET /v1/things/1 HTTP/1.0\r\n\r\n');
      assert.deepEqual(res.body, { path: '/things/1', base: '/v1', self: `http://127.0.0.1:${port}/v1/things/1` });
      const empty = await raw('GET /v1/things/1 HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n');
      assert.deepEqual(empty.body, { path: '/things/1', base: '/v1', self: `http://127.0.0.1:${port}/v1/things/1` });
    });
  });
});
