import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { close, listen } from '../../../support/server';
import { configOf, mapping } from '../../../support/records';
import { echoModule, registry } from '../../../support/modules';
import { recordingUpstream } from '../../../support/upstreams';
import { send } from '../../../support/client';

describe("a client's own X-Travel-User, on a gateway without an AuthService", () => {
  let backend: Awaited<ReturnType<typeof recordingUpstream>>;
  let gateway: Gateway;
  let server: Server;
  let base = '';

  before(async () => {
    backend = await recordingUpstream();
    gateway = createGateway({
      modules: registry(echoModule('echo')),
      config: configOf(mapping('/local/', 'echo'), mapping('/remote/', backend.url)),
    });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });
  after(async () => {
    await close(server);
    await gateway.close();
    await close(backend.server);
  });

  it('never reaches an in-process module, in any spelling of the name', async () => {
    const res = await send(base, '/local/x', { headers: { 'X-Travel-User': 'bob', 'x-travel-USER': 'bob' } });
    assert.equal(res.status, 200);
    assert.equal(res.json().headers['x-travel-user'], undefined);
  });

  it('never reaches a remote upstream, parsed or raw', async () => {
    const res = await send(base, '/remote/x', { headers: { 'X-Travel-User': 'bob' } });
    assert.equal(res.status, 200);
    const received = backend.received.at(-1)!;
    assert.equal(received.headers['x-travel-user'], undefined);
    assert.ok(!received.rawHeaders.some((h) => h.toLowerCase() === 'x-travel-user'), received.rawHeaders.join(' '));
  });

  it('never reaches a remote upstream spelt with underscores, which CGI and WSGI read as the same header', async () => {
    const res = await send(base, '/remote/x', { headers: { X_Travel_User: 'bob', 'x-travel_user': 'carol' } });
    assert.equal(res.status, 200);
    const received = backend.received.at(-1)!;
    const names = received.rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase().replace(/_/g, '-'));
    assert.ok(!names.includes('x-travel-user'), received.rawHeaders.join(' '));
  });

  it('never reaches a remote upstream spelt with dots, which PHP reads as the same header', async () => {
    const res = await send(base, '/remote/x', { headers: { 'X.Travel.User': 'bob', 'x-travel.user': 'carol' } });
    assert.equal(res.status, 200);
    const received = backend.received.at(-1)!;
    const names = received.rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase().replace(/[_.]/g, '-'));
    assert.ok(!names.includes('x-travel-user'), received.rawHeaders.join(' '));
  });

  it('lets no header that names another path (X-Original-URL, X-Rewrite-URL) reach a backend, in any spelling', async () => {
    const headers = {
      'X-Original-URL': '/admin',
      'X-Rewrite-URL': '/admin',
      X_Original_URL: '/admin',
      'X.Rewrite.Url': '/admin',
    };
    const res = await send(base, '/remote/x', { headers });
    assert.equal(res.status, 200);
    const received = backend.received.at(-1)!;
    assert.equal(received.url, '/x');
    const names = received.rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase().replace(/[_.]/g, '-'));
    assert.deepEqual(
      names.filter((n) => /url/.test(n)),
      [],
      received.rawHeaders.join(' '),
    );
    const local = await send(base, '/local/x', { headers });
    assert.deepEqual(
      Object.keys(local.json().headers).filter((h) => /url/.test(h)),
      [],
    );
  });

  it("still carries the user a Mapping's add_request_headers sets", async () => {
    const configured = createGateway({
      modules: registry(echoModule('echo')),
      config: configOf(mapping('/local/', 'echo', { add_request_headers: { 'X-Travel-User': 'service-account' } })),
    });
    const up = await listen(configured.app.callback());
    try {
      const res = await send(up.url, '/local/x', { headers: { 'X-Travel-User': 'bob' } });
      assert.equal(res.json().headers['x-travel-user'], 'service-account');
    } finally {
      await close(up.server);
      await configured.close();
    }
  });
});
