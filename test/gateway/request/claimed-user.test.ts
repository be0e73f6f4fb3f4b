import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { createGateway, type Gateway } from '../../../src/gateway';
import { close, configOf, echoModule, listen, mapping, recordingUpstream, registry, send } from '../helpers';

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
    const headers = { 'X-Original-URL': '/admin', 'X-Rewrite-URL': '/admin', X_Original_URL: '/admin', 'X.Rewrite.Url': '/admin' };
    const res = await send(base, '/remote/x', { headers });
    assert.equal(res.status, 200);
    const received = backend.received.at(-1)!;
    assert.equal(received.url, '/x');
    const names = received.rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase().replace(/[_.]/g, '-'));
    assert.deepEqual(names.filter((n) => /url/.test(n)), [], received.rawHeaders.join(' '));
    const local = await send(base, '/local/x', { headers });
    assert.deepEqual(Object.keys(local.json().headers).filter((h) => /url/.test(h)), []);
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

describe("a client's own copies of the headers only Envoy sets", () => {
  let backend: Awaited<ReturnType<typeof recordingUpstream>>;
  let authService: Awaited<ReturnType<typeof recordingUpstream>>;
  let gateway: Gateway;
  let server: Server;
  let base = '';
  /** What a client sends to pass for Envoy, or for a client certificate Envoy checked, in the spellings a backend reads alike. */
  const claims: Record<string, string> = {
    'X-Forwarded-Client-Cert': 'By=spiffe://shop/quote;Hash=00;Subject="CN=admin"',
    X_Forwarded_Client_Cert: 'Subject="CN=admin"',
    'X-Envoy-Internal': 'true',
    'X-Envoy-External-Address': '10.0.0.1',
    'X-Envoy-Original-Path': '/admin/',
    'X-Envoy-Original-Url': 'http://internal/admin/',
    'X-Envoy-Expected-Rq-Timeout-Ms': '1',
    'X-Envoy-Upstream-Rq-Timeout-Ms': '1',
    'X-Envoy-Retry-On': '5xx',
    'X-Envoy-Max-Retries': '100',
    'X-Envoy-Downstream-Service-Cluster': 'admin',
    'X-Envoy-Force-Trace': 'true',
    X_Envoy_Internal: 'true',
    'X.Envoy.Decorator.Operation': 'admin',
  };
  /** Names that are neither, which go on as any header does. */
  const kept = { 'X-Envoyish': 'a', 'X-Forwarded-Client': 'b', 'X-Client-Cert': 'c' };
  const names = (raw: string[]) => raw.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase().replace(/[_.]/g, '-'));
  const owned = (name: string) => name.startsWith('x-envoy-') || name === 'x-forwarded-client-cert';

  before(async () => {
    backend = await recordingUpstream();
    authService = await recordingUpstream();
    gateway = createGateway({
      modules: registry(echoModule('echo')),
      config: configOf(
        { apiVersion: 'gateway/v1', kind: 'AuthService', name: 'mtls', auth_service: `127.0.0.1:${authService.port}`, allowed_request_headers: ['x-forwarded-client-cert', 'x-envoy-internal'] },
        mapping('/local/', 'echo'),
        mapping('/remote/', backend.url),
        mapping('/tagged/', backend.url, { add_request_headers: { 'x-envoy-original-path': '/tagged/' } }),
      ),
    });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });
  after(async () => {
    await close(server);
    await gateway.close();
    await close(backend.server);
    await close(authService.server);
  });

  it('never reach a remote upstream, in any spelling, while the headers like them do', async () => {
    const res = await send(base, '/remote/x', { headers: { ...claims, ...kept } });
    assert.equal(res.status, 200);
    const received = names(backend.received.at(-1)!.rawHeaders);
    assert.deepEqual(received.filter(owned), [], backend.received.at(-1)!.rawHeaders.join(' '));
    assert.deepEqual(received.filter((n) => n in { 'x-envoyish': 1, 'x-forwarded-client': 1, 'x-client-cert': 1 }), ['x-envoyish', 'x-forwarded-client', 'x-client-cert']);
    assert.equal(backend.received.at(-1)!.url, '/x');
  });

  it('never reach the auth service, even where allowed_request_headers names them', async () => {
    await send(base, '/remote/x', { headers: claims });
    const asked = authService.received.at(-1)!;
    assert.deepEqual(names(asked.rawHeaders).filter(owned), [], asked.rawHeaders.join(' '));
  });

  it('never reach an in-process module', async () => {
    const res = await send(base, '/local/x', { headers: claims });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.json().headers).map((h) => h.replace(/[_.]/g, '-')).filter(owned), []);
  });

  it("still carry what a Mapping's add_request_headers sets", async () => {
    await send(base, '/tagged/x', { headers: { 'X-Envoy-Original-Path': '/admin/' } });
    assert.equal(backend.received.at(-1)!.headers['x-envoy-original-path'], '/tagged/');
  });
});
