import assert from 'node:assert/strict';
import type http from 'node:http';
import { createGateway, type Gateway } from '../../src/gateway';
import { close, listen } from '../support/server';
import { configOf, mapping } from '../support/records';
import { echoModule, registry, type Echo } from '../support/modules';
import { send } from '../support/client';

describe('gateway in-process routing', () => {
  let gateway: Gateway;
  let server: http.Server;
  let base: string;

  before(async () => {
    gateway = createGateway({
      modules: registry(echoModule('hotels'), echoModule('cars'), echoModule('api')),
      config: configOf(
        mapping('/v1/hotels', 'hotels', { name: 'hotels', rewrite: '' }),
        mapping('/v1/cars', 'cars', { name: 'cars', rewrite: '' }),
        mapping('/v1/', 'api', { name: 'api', rewrite: '' }),
        mapping('/strip/', 'cars', { name: 'strip' }),
        mapping('/short', 'cars', { name: 'short' }),
        mapping('/v2api/', 'api', { name: 'v2api', rewrite: '/v2' }),
        mapping('/edits/', 'hotels', {
          name: 'edits',
          add_request_headers: { 'X-Added': 'by-gateway', 'X-Replaced': { value: 'new', append: false } },
          remove_request_headers: ['x-secret'],
          add_response_headers: { 'X-Served-By': 'gatehouse' },
        }),
      ),
    });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });

  after(async () => {
    await close(server);
    await gateway.close();
  });

  async function echo(path: string, headers?: Record<string, string>): Promise<Echo> {
    const res = await send(base, path, { headers });
    assert.equal(res.status, 200, `${path}: ${res.text}`);
    return res.json() as Echo;
  }

  it('routes to the module of the longest matching prefix with the path unchanged under rewrite ""', async () => {
    const hotels = await echo('/v1/hotels/bookings/42');
    assert.equal(hotels.module, 'hotels');
    assert.equal(hotels.path, '/v1/hotels/bookings/42');
    assert.equal(hotels.mapping, 'hotels');
    assert.equal((await echo('/v1/messages/1')).module, 'api');
    assert.equal((await echo('/v1/hotelsX')).module, 'api');
  });

  it('keeps the query string', async () => {
    const seen = await echo('/v1/cars/x?b=2&a=%20');
    assert.equal(seen.url, '/v1/cars/x?b=2&a=%20');
    assert.equal(seen.query, 'b=2&a=%20');
  });

  it('replaces the prefix with / by default, keeping the query', async () => {
    const seen = await echo('/strip/bookings/x?q=1');
    assert.equal(seen.path, '/bookings/x');
    assert.equal(seen.url, '/bookings/x?q=1');
    assert.equal((await echo('/strip/')).path, '/');
    assert.equal((await echo('/short')).path, '/');
    assert.equal((await echo('/short/a')).path, '/a');
  });

  it('puts a rewrite in place of the prefix', async () => {
    const seen = await echo('/v2api/messages/1?x=y');
    assert.equal(seen.url, '/v2/messages/1?x=y');
  });

  it('tells the module the path the client asked for, so that its absolute URLs are right', async () => {
    const seen = await echo('/strip/%62ookings//x');
    assert.equal(seen.path, '/bookings/x');
    assert.equal(seen.originalPath, '/strip/bookings/x');
    assert.equal(seen.self, `${base}/strip/bookings/x`);
  });

  const spellings: [string, string][] = [
    ['/v1/hotels/../cars/x', '/v1/cars/x'],
    ['//v1/cars', '/v1/cars'],
    ['/v1//cars/x', '/v1/cars/x'],
    ['/v1/%63ars', '/v1/cars'],
    ['/v1/%63%61%72%73/x', '/v1/cars/x'],
    ['/v1/cars/%2e%2e/hotels/x', '/v1/hotels/x'],
    ['/v1/cars/%2E%2e/hotels/x', '/v1/hotels/x'],
    ['/v1/cars/.%2e/hotels', '/v1/hotels'],
    ['/v1/./cars/x', '/v1/cars/x'],
    ['/v1/%2e/cars', '/v1/cars'],
    ['/v1\\cars\\x', '/v1/cars/x'],
    ['/v1/hotels%2F..%2Fcars', '/v1/cars'],
    ['/v1/cars/a%3ab', '/v1/cars/a%3Ab'],
    ['/v1/cars/a%3Ab', '/v1/cars/a%3Ab'],
    ['/v1/hotels/.', '/v1/hotels/'],
    ['/v1/hotels/x/..', '/v1/hotels/'],
  ];
  for (const [spelling, normal] of spellings) {
    it(`routes ${spelling} exactly as ${normal}`, async () => {
      const [a, b] = await Promise.all([send(base, spelling), send(base, normal)]);
      if (spelling.includes('%2F')) {
        assert.equal(a.status, 400);
        return;
      }
      assert.equal(a.status, b.status, a.text);
      const [ea, eb] = [a.json() as Echo, b.json() as Echo];
      assert.equal(ea.module, eb.module);
      assert.equal(ea.mapping, eb.mapping);
      assert.equal(ea.path, normal);
      assert.equal(eb.path, normal);
    });
  }

  it('answers an encoded slash or backslash with 400 and the error body', async () => {
    for (const path of ['/v1/cars%2Fx', '/v1/cars%2fx', '/v1%5Ccars', '/v1%5ccars']) {
      const res = await send(base, path);
      assert.equal(res.status, 400, path);
      assert.match(res.headers['content-type'] ?? '', /^application\/json/);
      assert.deepEqual(res.json(), {
        code: 400,
        message: '400: Bad Request',
        detail: 'an encoded slash or backslash is not allowed in the path',
      });
    }
  });

  it('answers a path that climbs above the root with 400', async () => {
    for (const path of ['/..', '/../v1/cars', '/v1/../../x', '/%2e%2e/v1/cars', '/v1/%2E%2e/%2e%2E/x']) {
      const res = await send(base, path);
      assert.equal(res.status, 400, path);
      assert.deepEqual(res.json(), {
        code: 400,
        message: '400: Bad Request',
        detail: 'the path climbs above the root',
      });
    }
  });

  it('answers 400 to ;parameters that would route a path to another Mapping than the path without them', async () => {
    // Tomcat, Jetty, Spring and JAX-RS drop them: /v1/hotels;x/bookings is /v1/hotels/bookings there.
    for (const path of [
      '/v1/hotels;x/bookings',
      '/v1/hotels;/bookings',
      '/v1/hotels%3Bx/bookings',
      '/v1/hotels%3bx/bookings',
      '/v1/hotels;x',
    ]) {
      const res = await send(base, path);
      assert.equal(res.status, 400, `${path}: ${res.text}`);
      assert.deepEqual(res.json(), {
        code: 400,
        message: '400: Bad Request',
        detail: 'the ;parameters of the path would route it elsewhere than the path without them',
      });
    }
  });

  it('routes ;parameters within the segments its Mapping routes by, and passes them on', async () => {
    const seen = await echo('/v1/hotels/bookings;jsessionid=1/x;v=2?q=1');
    assert.equal(seen.module, 'hotels');
    assert.equal(seen.url, '/v1/hotels/bookings;jsessionid=1/x;v=2?q=1');
    assert.equal((await echo('/v1/messages;x/1')).module, 'api');
    assert.equal((await send(base, '/nothing;x/v1/cars')).status, 404);
  });

  it('answers 400 to an encoded NUL, which a backend may read as the end of the path', async () => {
    // /v1/cars%00 matches /v1/ here; a backend that stops at the NUL serves /v1/cars.
    for (const path of ['/v1/cars%00', '/v1/x/..%00/cars', '/v1/cars/%00']) {
      const res = await send(base, path);
      assert.equal(res.status, 400, `${path}: ${res.text}`);
      assert.deepEqual(res.json(), {
        code: 400,
        message: '400: Bad Request',
        detail: 'an encoded NUL (%00) is not allowed in the path',
      });
    }
  });

  it('answers a malformed escape with 400', async () => {
    const res = await send(base, '/v1/cars/%zz');
    assert.equal(res.status, 400);
    assert.equal(res.json().code, 400);
  });

  it('answers a path no mapping matches with 404 and the error body', async () => {
    for (const path of ['/nothing', '/v1', '/shortX', '/v2api']) {
      const res = await send(base, path);
      assert.equal(res.status, 404, path);
      assert.deepEqual(res.json(), { code: 404, message: '404: Not Found' });
    }
  });

  it('adds and removes request headers and adds response headers', async () => {
    const res = await send(base, '/edits/x', {
      headers: { 'X-Secret': 'hidden', 'X-Replaced': 'old', 'X-Kept': 'kept' },
    });
    assert.equal(res.status, 200);
    const seen = res.json() as Echo;
    assert.equal(seen.headers['x-added'], 'by-gateway');
    assert.equal(seen.headers['x-replaced'], 'new');
    assert.equal(seen.headers['x-secret'], undefined);
    assert.equal(seen.headers['x-kept'], 'kept');
    assert.equal(res.headers['x-served-by'], 'gatehouse');
    assert.equal(res.headers['x-echo-module'], 'hotels');
  });

  it('leaves the headers of other routes alone', async () => {
    const res = await send(base, '/v1/hotels', { headers: { 'X-Secret': 'kept' } });
    assert.equal((res.json() as Echo).headers['x-secret'], 'kept');
    assert.equal(res.headers['x-served-by'], undefined);
  });

  it('answers check_alive and check_ready with 200 JSON, GET and HEAD only', async () => {
    const alive = await send(base, '/gateway/v0/check_alive');
    assert.equal(alive.status, 200);
    assert.deepEqual(alive.json(), { status: 'alive' });
    const ready = await send(base, '/gateway/v0/check_ready');
    assert.equal(ready.status, 200);
    assert.equal(ready.json().status, 'ready');
    assert.equal(ready.json().routes, 7);
    assert.equal((await send(base, '/gateway/v0/check_ready', { method: 'HEAD' })).status, 200);
    const post = await send(base, '/gateway/v0/check_alive', { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
    assert.equal((await send(base, '/gateway/v0/%63heck_alive')).status, 200);
  });
});

describe('gateway without a configuration', () => {
  let gateway: Gateway;
  let server: http.Server;
  let base: string;

  before(async () => {
    gateway = createGateway({ modules: registry(echoModule('cars')) });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });

  after(async () => {
    await close(server);
    await gateway.close();
  });

  it('is alive, not ready, and answers routed paths with 503 until configured', async () => {
    assert.equal((await send(base, '/gateway/v0/check_alive')).status, 200);
    const ready = await send(base, '/gateway/v0/check_ready');
    assert.equal(ready.status, 503);
    assert.deepEqual(ready.json(), {
      code: 503,
      message: '503: Service Unavailable',
      detail: 'no configuration is loaded',
    });
    assert.equal((await send(base, '/v1/cars')).status, 503);
    assert.equal(gateway.snapshot().ready, false);

    gateway.reconfigure(configOf(mapping('/v1/cars', 'cars')));
    assert.equal((await send(base, '/gateway/v0/check_ready')).status, 200);
    assert.equal((await send(base, '/v1/cars')).status, 200);
  });
});
