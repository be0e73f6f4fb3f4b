/**
 * Emissary's Mapping fields about hosts and case, through the gateway:
 * `hostname` / `host` on what a client sends, `host_rewrite` on what a real
 * upstream receives, and `case_sensitive: false` with the auth stage and the
 * path spellings normalisation folds together.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createAuthService, type AuthService } from '../../../src/auth';
import { ConfigError, createGateway, type Gateway } from '../../../src/gateway';
import { authRecord, configOf, mapping } from '../../support/records';
import { basic, quickHash, usersFolder } from '../../support/credentials';
import { memoryLogger } from '../../support/memory-logger';
import { close, listen } from '../../support/server';
import { echoModule, registry, type Echo } from '../../support/modules';
import { recordingUpstream } from '../../support/upstreams';
import { send, sendRaw } from '../../support/client';
import { NO_BOUND_MS } from '../../support/polling';

/** The problems a gateway is refused with for a Mapping of /v1/ to the in-process module `api` with `fields`. */
function refusedOnModule(fields: Record<string, unknown>): string[] {
  try {
    createGateway({ modules: registry(echoModule('api')), config: configOf(mapping('/v1/', 'api', fields)) });
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems.map((p) => p.text);
  }
  return assert.fail('the gateway should have been refused');
}

describe('gateway Mappings by host', () => {
  let gateway: Gateway;
  let server: http.Server;
  let base: string;

  before(async () => {
    gateway = createGateway({
      modules: registry(echoModule('api'), echoModule('www'), echoModule('tenants'), echoModule('fallback')),
      config: configOf(
        mapping('/v1/', 'api', { name: 'api', hostname: 'api.example.com' }),
        mapping('/v1/', 'tenants', { name: 'tenants', hostname: '*.tenants.example.com' }),
        mapping('/v1/', 'www', { name: 'www', host: 'www.example.com' }),
        mapping('/v1/', 'api', { name: 'admin-port', hostname: 'admin.example.com:8443' }),
        mapping('/v1/', 'fallback', { name: 'fallback', hostname: '*' }),
      ),
    });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });

  after(async () => {
    await close(server);
    await gateway.close();
  });

  async function routeOf(host: string | undefined, path = '/v1/x'): Promise<string> {
    const res = await send(base, path, { headers: host === undefined ? {} : { Host: host } });
    assert.equal(res.status, 200, `${host}: ${res.text}`);
    return (res.json() as Echo).mapping!;
  }

  it('routes by the Host to the Mapping whose hostname names it, any other Host to hostname "*"', async () => {
    assert.equal(await routeOf('api.example.com'), 'api');
    assert.equal(await routeOf('www.example.com'), 'www');
    assert.equal(await routeOf('example.com'), 'fallback');
    assert.equal(await routeOf('api.example.com.evil.net'), 'fallback');
  });

  it('matches a glob on any name below it, in any case', async () => {
    assert.equal(await routeOf('acme.tenants.example.com'), 'tenants');
    assert.equal(await routeOf('EU.Acme.Tenants.Example.Com'), 'tenants');
    assert.equal(await routeOf('tenants.example.com'), 'fallback');
  });

  it('routes a Host with a port or a trailing dot as the bare name: no spelling of it reaches another Mapping', async () => {
    assert.equal(await routeOf('api.example.com:8080'), 'api');
    assert.equal(await routeOf('api.example.com:443'), 'api');
    assert.equal(await routeOf('API.EXAMPLE.COM.'), 'api');
    assert.equal(await routeOf('www.example.com:80'), 'www');
  });

  it('wants the port a hostname names', async () => {
    assert.equal(await routeOf('admin.example.com:8443'), 'admin-port');
    assert.equal(await routeOf('admin.example.com'), 'fallback');
    assert.equal(await routeOf('admin.example.com:443'), 'fallback');
  });

  it("routes an absolute-form request by the target's authority, not the Host line", async () => {
    const res = await send(base, 'http://api.example.com/v1/x', { headers: { Host: 'www.example.com' } });
    assert.equal(res.status, 200, res.text);
    const seen = res.json() as Echo;
    assert.equal(seen.mapping, 'api');
    assert.equal(seen.path, '/x');
    assert.equal(seen.headers.host, 'api.example.com');
  });

  it('answers 404 when only Mappings for other hosts hold the path', async () => {
    const only = createGateway({
      modules: registry(echoModule('api')),
      config: configOf(mapping('/', 'api', { hostname: 'api.example.com' })),
    });
    const { server: s, url } = await listen(only.app.callback());
    try {
      const res = await send(url, '/x', { headers: { Host: 'other.example.com' } });
      assert.equal(res.status, 404);
      assert.deepEqual(res.json(), { code: 404, message: '404: Not Found' });
    } finally {
      await close(s);
      await only.close();
    }
  });
});

describe('gateway Mappings by host, against spellings of the Host', () => {
  const folder = usersFolder();
  let auth: AuthService;
  let gateway: Gateway;
  let server: http.Server;
  let port: number;

  before(async () => {
    auth = createAuthService({
      maxWaitMs: NO_BOUND_MS,
      usersFile: folder.write('users.htpasswd', `alice:${quickHash('wonderland')}\n`),
      logger: memoryLogger(),
    });
    gateway = createGateway({
      modules: registry(auth, echoModule('app')),
      config: {
        ...configOf(
          mapping('/v1/', 'app', { name: 'admin', hostname: 'admin.example.com' }),
          mapping('/v1/', 'app', { name: 'public', bypass_auth: true }),
          mapping('/ip/', 'app', { name: 'admin-ip', hostname: '10.0.0.5' }),
          mapping('/ip/', 'app', { name: 'public-ip', bypass_auth: true }),
          mapping('/ip6/', 'app', { name: 'admin-ip6', hostname: '[::1]' }),
          mapping('/ip6/', 'app', { name: 'public-ip6', bypass_auth: true }),
        ),
        authService: authRecord({ auth_service: 'auth' }),
      },
    });
    ({ server, port } = await listen(gateway.app.callback()));
  });

  after(async () => {
    await close(server);
    await gateway.close();
    await auth.close();
    folder.remove();
  });

  const BAD_HOST = {
    code: 400,
    message: '400: Bad Request',
    detail: 'the Host (or the authority of the request target) is no host name or IP address with an optional port',
  };

  it('answers 400 to a Host that is no host, from which Koa, URLs or a backend would read the protected one', async () => {
    const hosts = [
      'admin.example.com:x',
      'admin.example.com:99999',
      'admin.example.com:000080',
      'admin.example.com,evil.com',
      'u@admin.example.com',
      'admin.example.com/x',
      'admin%2Eexample.com',
      'admin.example.com evil',
      'admin.example.com..',
      'admin.exämple.com',
      '[::1',
    ];
    for (const host of hosts) {
      const res = await sendRaw(port, `GET /v1/x HTTP/1.1\r\nHost: ${host}`);
      assert.equal(res.status, 400, `${host}: ${res.text}`);
      assert.deepEqual(res.json(), BAD_HOST, host);
    }
  });

  it('answers 400 to an IPv4 address spelled other than in four decimal numbers', async () => {
    for (const host of ['167772165', '10.5', '0xa.0.0.5', '10.0.0.05']) {
      const res = await sendRaw(port, `GET /ip/x HTTP/1.1\r\nHost: ${host}`);
      assert.equal(res.status, 400, `${host}: ${res.text}`);
    }
    assert.equal((await sendRaw(port, 'GET /ip/x HTTP/1.1\r\nHost: 10.0.0.5:8080')).status, 401);
  });

  it('asks for credentials on every spelling of a protected IPv6 address, which Koa reads as that address', async () => {
    for (const host of ['[::1]', '[0:0::1]', '[0:0:0:0:0:0:0:1]:8080']) {
      const res = await sendRaw(port, `GET /ip6/x HTTP/1.1\r\nHost: ${host}`);
      assert.equal(res.status, 401, `${host}: ${res.text}`);
    }
  });

  it('answers 400 to an absolute-form target whose authority is no host', async () => {
    for (const authority of ['admin.example.com,evil.com', 'admin%2Eexample.com', '2130706433']) {
      const res = await sendRaw(port, `GET http://${authority}/v1/x HTTP/1.1\r\nHost: gw.example.com`);
      assert.equal(res.status, 400, `${authority}: ${res.text}`);
    }
  });

  it('asks for credentials on every spelling of the protected host, and routes a request naming no host to hostname "*"', async () => {
    for (const host of ['admin.example.com', 'ADMIN.Example.COM.', 'admin.example.com.:8080', 'admin.example.com:']) {
      const res = await sendRaw(port, `GET /v1/x HTTP/1.1\r\nHost: ${host}`);
      assert.equal(res.status, 401, `${host}: ${res.text}`);
    }
    for (const head of [
      'GET /v1/x HTTP/1.1\r\nHost: ',
      'GET /v1/x HTTP/1.0',
      'GET /v1/x HTTP/1.1\r\nHost: my_service',
    ]) {
      const res = await sendRaw(port, head);
      assert.equal(res.status, 200, `${head}: ${res.text}`);
      assert.equal((res.json() as Echo).mapping, 'public');
    }
    // Node refuses HTTP/1.1 without Host itself.
    assert.equal((await sendRaw(port, 'GET /v1/x HTTP/1.1')).status, 400);
  });
});

describe('gateway Mappings by host, on the host modules are told of', () => {
  const folder = usersFolder();
  let auth: AuthService;

  before(() => {
    auth = createAuthService({
      maxWaitMs: NO_BOUND_MS,
      usersFile: folder.write('users.htpasswd', `alice:${quickHash('wonderland')}\n`),
      logger: memoryLogger(),
    });
  });

  after(async () => {
    await auth.close();
    folder.remove();
  });

  function hostGateway(trustProxy: boolean): Gateway {
    return createGateway({
      trustProxy,
      modules: registry(auth, echoModule('app')),
      config: {
        ...configOf(
          mapping('/v1/', 'app', { name: 'admin', hostname: 'admin.example.com' }),
          mapping('/v1/', 'app', { name: 'public', bypass_auth: true }),
        ),
        authService: authRecord({ auth_service: 'auth' }),
      },
    });
  }

  it("routes by X-Forwarded-Host behind a trusted proxy, whose host the modules' links and the upstreams name", async () => {
    const gateway = hostGateway(true);
    const { server, url } = await listen(gateway.app.callback());
    try {
      const claimed = await send(url, '/v1/x', {
        headers: { Host: 'www.example.com', 'X-Forwarded-Host': 'admin.example.com' },
      });
      assert.equal(claimed.status, 401, claimed.text);
      const named = await send(url, '/v1/x', {
        headers: { Host: 'admin.example.com', 'X-Forwarded-Host': 'www.example.com, admin.example.com' },
      });
      assert.equal(named.status, 200, named.text);
      assert.equal((named.json() as Echo).mapping, 'public');
      assert.equal((named.json() as Echo).self, 'http://www.example.com/v1/x');
      const bad = await send(url, '/v1/x', {
        headers: { Host: 'www.example.com', 'X-Forwarded-Host': 'admin.example.com:x' },
      });
      assert.equal(bad.status, 400, bad.text);
      assert.equal(
        bad.json().detail,
        'the X-Forwarded-Host (or :authority) is no host name or IP address with an optional port',
      );
    } finally {
      await close(server);
      await gateway.close();
    }
  });

  it('routes an HTTP/2 request by its :authority', async () => {
    const gateway = hostGateway(false);
    const server = http2.createServer(gateway.app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const ask = (authority: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = client.request({ ':path': '/v1/x', ':authority': authority });
        req.on('response', (headers) => resolve(Number(headers[':status'])));
        req.on('error', reject);
        req.resume();
      });
    try {
      assert.equal(await ask('admin.example.com'), 401);
      assert.equal(await ask('www.example.com'), 200);
      assert.equal(await ask('admin.example.com:x'), 400);
    } finally {
      client.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.close();
    }
  });
});

describe('gateway host_rewrite', () => {
  it("sends a remote upstream the host_rewrite as Host, and the client's Host in X-Forwarded-Host", async () => {
    const up = await recordingUpstream();
    const gateway = createGateway({
      config: configOf(mapping('/rewritten/', up.url, { host_rewrite: 'httpbin.org' }), mapping('/plain/', up.url)),
    });
    const { server, url } = await listen(gateway.app.callback());
    try {
      assert.equal((await send(url, '/rewritten/x', { headers: { Host: 'gw.example.com' } })).status, 200);
      assert.equal((await send(url, '/plain/x', { headers: { Host: 'gw.example.com' } })).status, 200);
      const [rewritten, plain] = up.received;
      assert.equal(rewritten.url, '/x');
      assert.equal(rewritten.headers.host, 'httpbin.org');
      assert.equal(rewritten.headers['x-forwarded-host'], 'gw.example.com');
      // One Host line, not the client's and the rewrite.
      assert.equal(
        rewritten.rawHeaders.filter((_, i, all) => i % 2 === 0 && all[i].toLowerCase() === 'host').length,
        1,
      );
      assert.equal(plain.headers.host, `127.0.0.1:${up.port}`);
      assert.equal(plain.headers['x-forwarded-host'], 'gw.example.com');
    } finally {
      await close(server);
      await gateway.close();
      await close(up.server);
    }
  });

  it("is refused on a Mapping of an in-process module, whose links name the client's Host", () => {
    assert.deepEqual(refusedOnModule({ name: 'links', host_rewrite: 'internal' }), [
      "Mapping links: host_rewrite: applies to remote upstreams only: module 'api' is called in process and builds its links from the client's Host",
    ]);
  });
});

describe('gateway allow_upgrade on an in-process module', () => {
  it('is refused: a module called in process switches no connection to another protocol', () => {
    assert.deepEqual(refusedOnModule({ name: 'live', use_websocket: true }), [
      "Mapping live: use_websocket: applies to remote upstreams only: module 'api' is called in process and switches no connection to another protocol",
    ]);
  });
});

describe('gateway case_sensitive: false with auth', () => {
  const folder = usersFolder();
  let auth: AuthService;
  let gateway: Gateway;
  let server: http.Server;
  let base: string;

  before(async () => {
    auth = createAuthService({
      maxWaitMs: NO_BOUND_MS,
      usersFile: folder.write('users.htpasswd', `alice:${quickHash('wonderland')}\n`),
      logger: memoryLogger(),
    });
    gateway = createGateway({
      modules: registry(auth, echoModule('api')),
      config: {
        ...configOf(
          mapping('/api/admin/', 'api', { name: 'admin' }),
          mapping('/api/', 'api', { name: 'public', case_sensitive: false, bypass_auth: true }),
        ),
        authService: authRecord({ auth_service: 'auth' }),
      },
    });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });

  after(async () => {
    await close(server);
    await gateway.close();
    await auth.close();
    folder.remove();
  });

  it('serves any case of its prefix without auth, as configured', async () => {
    for (const path of ['/api/messages', '/API/messages', '/Api/Messages']) {
      const res = await send(base, path);
      assert.equal(res.status, 200, path);
      assert.equal((res.json() as Echo).mapping, 'public');
    }
  });

  it('answers 401 to every spelling of the protected path, in any case, without credentials', async () => {
    const spellings = [
      '/api/admin/users',
      '/API/ADMIN/users',
      '/api/Admin/users',
      '/api/%41dmin/users',
      '/API//admin/./users',
      '/api/x/../ADMIN/users',
      '/%61pi/ADMIN/users',
    ];
    for (const path of spellings) {
      const res = await send(base, path);
      assert.equal(res.status, 401, `${path}: ${res.text}`);
    }
  });

  it('routes those spellings to the protected Mapping with credentials', async () => {
    const res = await send(base, '/API/%41DMIN/users', { headers: { Authorization: basic('alice', 'wonderland') } });
    assert.equal(res.status, 200, res.text);
    const seen = res.json() as Echo;
    assert.equal(seen.mapping, 'admin');
    assert.equal(seen.path, '/users');
    assert.equal(seen.headers['x-travel-user'], 'alice');
  });
});
