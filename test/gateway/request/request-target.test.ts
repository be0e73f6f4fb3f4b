/**
 * Absolute-form request targets (`GET http://host/path HTTP/1.1`), sent byte
 * for byte on a socket: they route, authenticate and link exactly as their
 * origin form, with the target's authority in place of Host (RFC 9112 §3.2.2).
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import Koa from 'koa';
import mount from 'koa-mount';
import { createApiModule } from '../../../src/api';
import { createAuthService, type AuthService } from '../../../src/auth';
import { createGateway, type GatehouseModule, type Gateway } from '../../../src/gateway';
import { basic, quickHash, usersFolder } from '../../support/credentials';
import { memoryLogger } from '../../support/memory-logger';
import { close, listen } from '../../support/server';
import { configOf, mapping } from '../../support/records';
import { echoModule, type Echo } from '../../support/modules';
import { recordingUpstream } from '../../support/upstreams';
import { sendRaw } from '../../support/client';
import { NO_BOUND_MS } from '../../support/polling';

const get = (target: string, headers = 'Host: internal.test') => `GET ${target} HTTP/1.1\r\n${headers}`;

describe('gateway absolute-form request targets', () => {
  const folder = usersFolder();
  let auth: AuthService;
  let gateway: Gateway;
  let server: http.Server;
  let port: number;
  let upstream: Awaited<ReturnType<typeof recordingUpstream>>;
  let reached = 0;

  before(async () => {
    auth = createAuthService({
      maxWaitMs: NO_BOUND_MS,
      usersFile: folder.write('users.htpasswd', `alice:${quickHash('wonderland')}\n`),
      logger: memoryLogger(),
    });
    upstream = await recordingUpstream((_req, res) => {
      reached++;
      res.end('upstream');
    });
    const echo = echoModule('echo');
    echo.app.middleware.unshift((_ctx, next) => {
      reached++;
      return next();
    });
    gateway = createGateway({
      modules: new Map<string, GatehouseModule>([
        ['auth', auth],
        ['echo', echo],
        ['api', createApiModule()],
      ]),
      config: configOf(
        { apiVersion: 'gateway/v1', kind: 'AuthService', name: 'authentication', auth_service: 'auth' },
        mapping('/v1/hotels', 'echo', { name: 'hotels', rewrite: '' }),
        mapping('/remote/', upstream.url, { name: 'remote' }),
        mapping('/open-remote/', upstream.url, { name: 'open-remote', bypass_auth: true }),
        mapping('/v1/', 'api', { name: 'api-v1', rewrite: '', bypass_auth: true }),
        mapping('/', 'echo', { name: 'root', rewrite: '', bypass_auth: true }),
      ),
    });
    ({ server, port } = await listen(gateway.app.callback()));
  });

  beforeEach(() => {
    reached = 0;
  });

  after(async () => {
    await close(server);
    await gateway.close();
    await close(upstream.server);
    await auth.close();
    folder.remove();
  });

  it("builds the api's url fields from the target's authority, not Host", async () => {
    const one = await sendRaw(port, get('http://public.example:8443/v1/messages/1'));
    assert.equal(one.status, 200, one.text);
    assert.equal(one.json().url, 'http://public.example:8443/v1/messages/1');
    const list = await sendRaw(port, get('http://public.example/v1/messages/?limit=1'));
    assert.equal(list.json().items[0].url, 'http://public.example/v1/messages/1');
    assert.match(list.json().next, /^http:\/\/public\.example\/v1\/messages\/\?/);
  });

  it('routes as the origin form: same mapping, and a path that starts with /', async () => {
    const absolute = (
      await sendRaw(
        port,
        get(
          'http://public.example/v1/hotels/%2e%2e/hotels/x?q=1',
          `Host: internal.test\r\nAuthorization: ${basic('alice', 'wonderland')}`,
        ),
      )
    ).json() as Echo;
    const origin = (
      await sendRaw(
        port,
        get('/v1/hotels/x?q=1', `Host: public.example\r\nAuthorization: ${basic('alice', 'wonderland')}`),
      )
    ).json() as Echo;
    assert.deepEqual(absolute, origin);
    assert.equal(absolute.url, '/v1/hotels/x?q=1');
    assert.equal(absolute.headers.host, 'public.example');
    assert.equal(absolute.self, 'http://public.example/v1/hotels/x');
  });

  it('reads an empty path as / and keeps the query', async () => {
    for (const [target, url] of [
      ['http://public.example', '/'],
      ['http://public.example?x=1', '/?x=1'],
    ]) {
      const seen = (await sendRaw(port, get(target))).json() as Echo;
      assert.equal(seen.mapping, 'root', target);
      assert.equal(seen.url, url, target);
    }
  });

  it('sends a remote upstream its own Host, the origin-form path, and the authority as X-Forwarded-Host', async () => {
    const res = await sendRaw(port, get('http://public.example:8443/open-remote/a/b?c=d'));
    assert.equal(res.status, 200, res.text);
    const got = upstream.received.at(-1)!;
    assert.equal(got.url, '/a/b?c=d');
    assert.equal(got.headers.host, `127.0.0.1:${upstream.port}`);
    assert.equal(got.headers['x-forwarded-host'], 'public.example:8443');
  });

  it('reads an empty port as the default one', async () => {
    const res = await sendRaw(port, get('http://public.example:/v1/messages/1'));
    assert.equal(res.json().url, 'http://public.example/v1/messages/1');
  });

  it('names the authority in links when an HTTP/1.0 request sends no Host', async () => {
    const res = await sendRaw(port, 'GET http://public.example/v1/messages/2 HTTP/1.0');
    assert.equal(res.json().url, 'http://public.example/v1/messages/2');
  });

  const guarded = [
    'http://public.example/v1/hotels/x',
    'HTTP://public.example/v1/hotels/x',
    'https://public.example/v1/hotels/x',
    'http://public.example//v1/hotels/x',
    'http://public.example/v1/%68otels/x',
    'http://public.example/v1/messages/../hotels/x',
    'http://public.example/v1/messages/%2e%2e/hotels/x',
    'http://public.example/open-remote/../remote/x',
    'http://public.example/remote/x',
    'http://public.example/v1/hotels%2Fx',
    'http://public.example/open-remote/%252e%252e/remote/x',
    'http://public.example/open-remote/%C0%AE%C0%AE/remote/x',
  ];
  for (const target of guarded) {
    it(`answers ${target} without credentials with 401 or 400, and no backend sees it`, async () => {
      const res = await sendRaw(port, get(target, 'Host: internal.test\r\nX-Travel-User: alice'));
      assert.ok(res.status === 401 || res.status === 400, `status ${res.status}`);
      assert.equal(res.json().code, res.status);
      assert.equal(reached, 0);
    });
  }

  it('answers a target that climbs above the root with 400', async () => {
    for (const target of [
      'http://public.example/../v1/hotels/x',
      'http://public.example/%2e%2e/v1/hotels/x',
      'http://public.example/v1/../../x',
    ]) {
      const res = await sendRaw(port, get(target));
      assert.equal(res.status, 400, target);
      assert.deepEqual(res.json(), {
        code: 400,
        message: '400: Bad Request',
        detail: 'the path climbs above the root',
      });
    }
    assert.equal(reached, 0);
  });

  it('answers 400 to a request with two Host lines, whatever their case, and no backend sees it', async () => {
    for (const second of ['Host: other.example', 'host: public.example', 'HOST: other.example']) {
      const res = await sendRaw(port, get('/v1/messages/1', `Host: public.example\r\n${second}`));
      assert.equal(res.status, 400, second);
      assert.deepEqual(res.json(), {
        code: 400,
        message: '400: Bad Request',
        detail: 'the request has more than one Host header',
      });
    }
    assert.equal(reached, 0);
    assert.equal((await sendRaw(port, get('/v1/messages/1', 'Host: public.example'))).status, 200);
  });

  it('answers 400 with the reason to a scheme other than http(s), user information, or no host[:port]', async () => {
    const cases: [string, string][] = [
      ['ftp://public.example/v1/messages/1', 'the request target must be an http or https URL'],
      ['http://alice:secret@public.example/v1/messages/1', 'the request target may not carry user information'],
      ['http:///v1/messages/1', 'the authority of the request target is no host[:port]'],
      ['http://public.example:99999/v1/messages/1', 'the authority of the request target is no host[:port]'],
      ['http://public.example:x/v1/messages/1', 'the authority of the request target is no host[:port]'],
    ];
    for (const [target, detail] of cases) {
      const res = await sendRaw(port, get(target));
      assert.equal(res.status, 400, target);
      assert.deepEqual(res.json(), { code: 400, message: '400: Bad Request', detail }, target);
    }
    assert.equal(reached, 0);
  });

  it('keeps the mount prefix of a host app in links', async () => {
    const host = new Koa();
    host.use(mount('/gw', gateway.app));
    const mounted = await listen(host.callback());
    try {
      const res = await sendRaw(mounted.port, get('http://public.example/gw/v1/messages/1'));
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json().url, 'http://public.example/gw/v1/messages/1');
    } finally {
      await close(mounted.server);
    }
  });
});
