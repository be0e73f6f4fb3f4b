/**
 * A Mapping's header edits as an Emissary user writes them, on an in-process
 * module and on a remote upstream on a real port alike: what the backend
 * received, and what the client got.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { createServiceApp } from '../../../../src/http';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { close, listen } from '../../../support/server';
import { configOf, mapping } from '../../../support/records';
import { freePort } from '../../../support/ports';
import { recordingUpstream } from '../../../support/upstreams';
import { registry } from '../../../support/modules';
import { send } from '../../../support/client';

const APP = 'https://app.example';

/** What both backends answer: the request headers they saw, and headers for the edits to work on. */
function backendHeaders(): Record<string, string | string[]> {
  return {
    'X-Up': 'up',
    'X-Only': 'up',
    'Set-Cookie': ['a=1'],
    Server: 'backend/1.0',
    'Content-Type': 'application/json',
  };
}

/** The same edits on every route. */
const EDITS = {
  add_request_headers: {
    'X-Join': 'gw',
    'X-Set': { value: 'gw', append: false },
    Cookie: 'gw=1',
    'X-Empty': '',
    'X-Client-Ip': '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%',
    'X-Client': { value: 'peer=%DOWNSTREAM_REMOTE_ADDRESS% over %PROTOCOL%', append: false },
    'X-Share': '100%%',
    'X-Escaped': '%%PROTOCOL%% is %PROTOCOL%',
  },
  remove_request_headers: 'x-secret',
  add_response_headers: {
    'X-Up': 'gw',
    'X-Only': { value: 'gw', append: false },
    'Set-Cookie': 'g=2',
    'X-Served-Over': '%PROTOCOL%',
    'X-Discount': '50%% off',
  },
  remove_response_headers: ['server'],
};

const FORWARDED = ['X-Forwarded-For', 'X-Forwarded-Proto', 'X-Forwarded-Host'];

describe('gateway header edits', () => {
  let gateway: Gateway;
  let server: http.Server;
  let base: string;
  let upstream: Awaited<ReturnType<typeof recordingUpstream>>;
  let slow: Awaited<ReturnType<typeof listen>>;

  before(async () => {
    const local = createServiceApp();
    local.use(async (ctx) => {
      ctx.set(backendHeaders());
      if (ctx.path === '/fail') ctx.throw(409, 'the module says no');
      ctx.body = { headers: ctx.headers };
    });
    upstream = await recordingUpstream((_req, res, received) => {
      for (const [name, value] of Object.entries(backendHeaders())) res.setHeader(name, value);
      res.end(JSON.stringify({ headers: received.headers }));
    });
    slow = await listen(() => undefined);
    gateway = createGateway({
      bodyLimit: 64,
      modules: registry({ name: 'local', app: local }),
      config: configOf(
        { apiVersion: 'gateway/v1', kind: 'Module', name: 'gateway', config: { cors: { origins: APP } } },
        mapping('/local/', 'local', { name: 'local', ...EDITS }),
        mapping('/remote/', upstream.url, { name: 'remote', ...EDITS }),
        mapping('/dead/', `127.0.0.1:${await freePort()}`, EDITS),
        mapping('/slow/', slow.url, { timeout_ms: 50, ...EDITS }),
        mapping('/private-local/', 'local', { remove_request_headers: FORWARDED }),
        mapping('/private-remote/', upstream.url, { remove_request_headers: FORWARDED }),
      ),
    });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });

  after(async () => {
    await close(server);
    await gateway.close();
    await Promise.all([close(upstream.server), close(slow.server)]);
  });

  for (const route of ['local', 'remote']) {
    describe(`to ${route === 'local' ? 'an in-process module' : 'a remote upstream'}`, () => {
      async function seen(headers: Record<string, string>): Promise<http.IncomingHttpHeaders> {
        const res = await send(base, `/${route}/x`, { headers });
        assert.equal(res.status, 200, res.text);
        return res.json().headers;
      }

      it('appends a plain value to the header the client sent, and sets it when there is none', async () => {
        assert.equal((await seen({ 'X-Join': 'client' }))['x-join'], 'client, gw');
        assert.equal((await seen({}))['x-join'], 'gw');
      });

      it("replaces the client's header with append: false", async () => {
        assert.equal((await seen({ 'X-Set': 'client' }))['x-set'], 'gw');
      });

      it('joins an added cookie to the cookies the client sent with a semicolon', async () => {
        assert.equal((await seen({ Cookie: 'c=1' })).cookie, 'c=1; gw=1');
      });

      it('removes what remove_request_headers names, and adds nothing for an empty value', async () => {
        const headers = await seen({ 'X-Secret': 'hidden', 'X-Empty': 'client' });
        assert.equal(headers['x-secret'], undefined);
        assert.equal(headers['x-empty'], 'client');
        assert.equal('x-empty' in (await seen({})), false);
      });

      it("fills in the Envoy variables Emissary documents: the client's address and the protocol", async () => {
        const headers = await seen({ 'X-Client': 'spoofed' });
        assert.equal(headers['x-client-ip'], '127.0.0.1');
        assert.match(String(headers['x-client']), /^peer=127\.0\.0\.1:[1-9][0-9]* over HTTP\/1\.1$/);
        const res = await send(base, `/${route}/x`);
        assert.equal(res.headers['x-served-over'], 'HTTP/1.1');
      });

      it('reads %% as one literal %, as Envoy does, so that an Emissary value comes out the same', async () => {
        const headers = await seen({});
        assert.equal(headers['x-share'], '100%');
        assert.equal(headers['x-escaped'], '%PROTOCOL% is HTTP/1.1');
        assert.equal((await send(base, `/${route}/x`)).headers['x-discount'], '50% off');
      });

      it("appends to the backend's response headers, replaces with append: false, and removes", async () => {
        const res = await send(base, `/${route}/x`);
        assert.equal(res.headers['x-up'], 'up, gw');
        assert.equal(res.headers['x-only'], 'gw');
        assert.deepEqual(res.headers['set-cookie'], ['a=1', 'g=2']);
        assert.equal(res.headers.server, undefined);
      });

      it('keeps what the gateway adds when the client names that header in Connection', async () => {
        const headers = await seen({ Connection: 'keep-alive, X-Join, X-Set', 'X-Join': 'client', 'X-Set': 'client' });
        assert.equal(headers['x-join'], 'gw');
        assert.equal(headers['x-set'], 'gw');
      });

      it('drops the headers the client names in Connection before they reach the backend', async () => {
        const headers = await seen({ Connection: 'X-Hop, close', 'X-Hop': 'dropped', 'X-Kept': 'kept' });
        assert.equal(headers['x-hop'], undefined);
        assert.equal(headers['x-kept'], 'kept');
      });

      it('answers 400 when Connection names a header that may not be dropped', async () => {
        for (const named of ['X-Forwarded-For', 'Host', 'Content-Length']) {
          const res = await send(base, `/${route}/x`, { headers: { Connection: `close, ${named}` } });
          assert.equal(res.status, 400, named);
          assert.deepEqual(res.json(), {
            code: 400,
            message: '400: Bad Request',
            detail: `the Connection header may not name ${named.toLowerCase()}`,
          });
        }
      });

      it("gives the gateway's 413 the route's response edits and CORS headers, for a sized body and a chunked one", async () => {
        for (const body of ['x'.repeat(100), ['x'.repeat(100)]]) {
          const res = await send(base, `/${route}/x`, { method: 'POST', body, headers: { Origin: APP } });
          assert.equal(res.status, 413);
          assert.equal(res.json().code, 413);
          assert.equal(res.headers['x-only'], 'gw');
          assert.equal(res.headers['access-control-allow-origin'], APP);
        }
      });
    });
  }

  for (const route of ['private-local', 'private-remote']) {
    it(`sends no X-Forwarded-* at all when remove_request_headers names them, the gateway's own neither (${route})`, async () => {
      const res = await send(base, `/${route}/x`, {
        headers: { 'X-Forwarded-For': '203.0.113.7', 'X-Forwarded-Host': 'spoofed.example' },
      });
      assert.equal(res.status, 200, res.text);
      const seen: http.IncomingHttpHeaders = res.json().headers;
      for (const name of FORWARDED) assert.equal(seen[name.toLowerCase()], undefined, name);
    });
  }

  it("gives a module's own error answer the route's response edits", async () => {
    const res = await send(base, '/local/fail', { headers: { Origin: APP } });
    assert.equal(res.status, 409);
    assert.equal(res.headers['x-only'], 'gw');
    assert.equal(res.headers['access-control-allow-origin'], APP);
  });

  it("gives the gateway's 503 and 504 the route's response edits, as Envoy's router does, with the error body", async () => {
    for (const [path, status] of [
      ['/dead/x', 503],
      ['/slow/x', 504],
    ] as const) {
      const res = await send(base, path, { headers: { Origin: APP } });
      assert.equal(res.status, status);
      assert.equal(res.json().code, status);
      assert.equal(res.headers['x-only'], 'gw', path);
      assert.deepEqual(res.headers['set-cookie'], ['g=2'], path);
      assert.equal(res.headers['access-control-allow-origin'], APP, path);
    }
  });
});
