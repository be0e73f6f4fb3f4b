/**
 * The hostile requests of the HTTP/1.1 tests (../support/hostile-requests) sent
 * again over HTTP/2, to a gateway served by the gateway's own listener:
 * the same path spellings, claimed users and method overrides fail the
 * same way, and the backend is told the same thing.
 */
import assert from 'node:assert/strict';
import type { ClientHttp2Session } from 'node:http2';
import { listen, type RunningServer } from '../../src/gatehouse';
import { createGateway, type Gateway } from '../../src/gateway';
import { basic } from '../support/credentials';
import { CLAIMED_USER_HEADERS, GUARDED_PATH_SPELLINGS, REROUTING_OVERRIDES } from '../support/hostile-requests';
import { h2Connect, h2Request } from '../support/http2-client';
import { echoModule, registry } from '../support/modules';
import { configOf, mapping } from '../support/records';
import { close } from '../support/server';
import { createGuardedGateway, type GuardedGateway, type Reached } from '../support/guarded-gateway';
import { recordingUpstream } from '../support/upstreams';

describe('hostile requests over HTTP/2, as over HTTP/1.1', () => {
  let guarded: GuardedGateway;
  let reached: Reached[];
  let server: RunningServer;
  let session: ClientHttp2Session;

  before(async () => {
    guarded = await createGuardedGateway();
    reached = guarded.reached;
    server = await listen(guarded.gateway.app.callback(), { host: '127.0.0.1', port: 0 });
    session = await h2Connect(`http://127.0.0.1:${server.port}`);
  });
  beforeEach(() => {
    reached.length = 0;
  });
  after(async () => {
    session.close();
    await server.close(0);
    await guarded.close();
  });

  for (const path of GUARDED_PATH_SPELLINGS) {
    it(`answers 401 or 400 to ${path} without credentials, and no backend sees it`, async () => {
      const res = await h2Request(session, path, { headers: { 'x-travel-user': 'alice' } });
      assert.ok(res.status === 401 || res.status === 400, `status ${res.status}`);
      if (res.status === 401) assert.equal(res.headers['www-authenticate'], 'Basic realm="gatehouse"');
      assert.equal(res.json().code, res.status);
      assert.deepEqual(reached, []);
    });
  }

  it('routes an odd spelling with credentials as the user they name, not the one claimed', async () => {
    const res = await h2Request(session, '/v1/hotels/%2e%2e/c%61rs/x', {
      headers: { authorization: basic('alice', 'wonderland'), 'x-travel-user': 'mallory' },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(reached, [{ where: 'in-process', path: '/x', user: 'alice' }]);
  });

  it('carries the user to a remote backend, not the one the client claimed, in any spelling', async () => {
    for (const name of CLAIMED_USER_HEADERS) {
      const res = await h2Request(session, '/remote/bookings', {
        headers: { authorization: basic('alice', 'wonderland'), [name.toLowerCase()]: 'mallory' },
      });
      assert.equal(res.status, 200, name);
      assert.deepEqual(res.json(), { path: '/bookings', user: 'alice' }, name);
    }
  });

  it('never lets a client name the user on a bypass_auth mapping, in any spelling', async () => {
    for (const name of CLAIMED_USER_HEADERS) {
      const res = await h2Request(session, '/open/x', { headers: { [name.toLowerCase()]: 'alice' } });
      assert.equal(res.status, 200, name);
      assert.deepEqual(res.json(), { path: '/x', user: null }, name);
    }
  });
});

describe('method overrides over HTTP/2, as over HTTP/1.1', () => {
  let backend: Awaited<ReturnType<typeof recordingUpstream>>;
  let gateway: Gateway;
  let server: RunningServer;
  let session: ClientHttp2Session;

  before(async () => {
    backend = await recordingUpstream();
    gateway = createGateway({
      modules: registry(echoModule('public'), echoModule('guarded')),
      config: configOf(
        mapping('/items/', 'public', { name: 'public', rewrite: '', method: 'POST' }),
        mapping('/items/', 'guarded', { name: 'guarded', rewrite: '' }),
        mapping('/remote/', backend.url, { name: 'remote', rewrite: '' }),
      ),
    });
    server = await listen(gateway.app.callback(), { host: '127.0.0.1', port: 0 });
    session = await h2Connect(`http://127.0.0.1:${server.port}`);
  });
  after(async () => {
    session.close();
    await server.close(0);
    await gateway.close();
    await close(backend.server);
  });

  it('answers 400 to an override that would take the request to another Mapping', async () => {
    for (const { path, headers } of REROUTING_OVERRIDES) {
      const lower = Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
      const res = await h2Request(session, path, { method: 'POST', headers: lower });
      assert.equal(res.status, 400, `${path} ${JSON.stringify(headers)}: ${res.text}`);
      assert.equal(res.json().detail, 'the method override of the request would route it elsewhere than its method');
    }
  });

  it('passes no pseudo-header, nor the TE of its client, to an HTTP/1.1 upstream', async () => {
    const res = await h2Request(session, '/remote/x?y=1', { method: 'POST', headers: { te: 'trailers' }, body: 'hi' });
    assert.equal(res.status, 200);
    const received = backend.received.at(-1)!;
    assert.equal(received.url, '/remote/x?y=1');
    assert.equal(received.body.toString('utf8'), 'hi');
    assert.deepEqual(
      received.rawHeaders.filter((h, i) => i % 2 === 0 && (h.startsWith(':') || /^te$/i.test(h))),
      [],
    );
    assert.equal(received.headers['x-forwarded-host'], `127.0.0.1:${server.port}`);
  });
});
