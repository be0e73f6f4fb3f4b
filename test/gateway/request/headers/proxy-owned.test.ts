/**
 * Headers that only a proxy writes, which backends and auth services take for
 * its word: a client's copy reaches none of them, in any spelling, unless a
 * proxy in front is trusted with `trustProxy` and sent it in its own.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { close, listen } from '../../../support/server';
import { configOf, mapping } from '../../../support/records';
import { echoModule, registry } from '../../../support/modules';
import { recordingUpstream, type Received } from '../../../support/upstreams';
import { send } from '../../../support/client';
import { NO_BOUND_MS } from '../../../support/polling';

type Recording = Awaited<ReturnType<typeof recordingUpstream>>;

/** The header names of raw header lines as CGI reads them: lower case, `_` and `.` as `-`. */
function cgiNames(rawHeaders: readonly string[]): string[] {
  return rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase().replace(/[_.]/g, '-'));
}

/** What a client sends to name another address, scheme, port, prefix or request than its own, in the spelling proxies write. */
const FORWARDING: Record<string, string> = {
  'X-Real-IP': '10.0.0.1',
  'True-Client-IP': '10.0.0.2',
  'X-Client-IP': '10.0.0.3',
  'X-Cluster-Client-IP': '10.0.0.4',
  'X-Forwarded': 'for=10.0.0.5',
  'Forwarded-For': '10.0.0.6',
  'Client-IP': '10.0.0.7',
  'CF-Connecting-IP': '10.0.0.8',
  'CF-Pseudo-IPv4': '10.0.0.9',
  'Fastly-Client-IP': '10.0.0.10',
  'Fly-Client-IP': '10.0.0.11',
  'X-AppEngine-User-IP': '10.0.0.12',
  'X-AppEngine-Remote-Addr': '10.0.0.13',
  'X-Forwarded-Ssl': 'on',
  'X-Forwarded-Scheme': 'https',
  'X-Forwarded-Protocol': 'https',
  'X-Url-Scheme': 'https',
  'X-Scheme': 'https',
  'Front-End-Https': 'on',
  'X-Forwarded-Port': '443',
  'X-Forwarded-Prefix': '/admin',
  'X-Forwarded-Server': 'internal.example',
  'X-Forwarded-Uri': '/public/',
  'X-Forwarded-Method': 'GET',
};
const FORWARDING_NAMES = Object.keys(FORWARDING).map((name) => name.toLowerCase());

/** The same names as a CGI, WSGI or PHP backend reads alike: with underscores, and a few with dots. */
function lookalikesOf(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.replace(/-/g, '_')] = value;
  out['X.Real.IP'] = '10.0.1.1';
  out['X.Forwarded.Prefix'] = '/admin';
  return out;
}

/** Names that are none of them, one letter more or less, which go on as any header does. */
const KEPT = { 'X-Real-IPs': 'a', 'X-Forwarded-Ports': 'b', 'X-Scheme-Id': 'c', 'Client-IPv6': 'd' };

/** A gateway in front of a recording backend and a recording auth service that is sent every forwarding header a client could send. */
function useGateway(trustProxy: boolean) {
  const rig = { backend: undefined as unknown as Recording, auth: undefined as unknown as Recording, base: '' };
  let gateway: Gateway;
  let server: Server;
  before(async () => {
    rig.backend = await recordingUpstream();
    rig.auth = await recordingUpstream();
    gateway = createGateway({
      trustProxy,
      modules: registry(echoModule('echo')),
      config: configOf(
        {
          apiVersion: 'gateway/v1',
          kind: 'AuthService',
          name: 'forward-auth',
          auth_service: `127.0.0.1:${rig.auth.port}`,
          timeout_ms: NO_BOUND_MS,
          allowed_request_headers: [
            ...FORWARDING_NAMES,
            ...Object.keys(lookalikesOf(FORWARDING)),
            ...Object.keys(KEPT),
          ],
        },
        mapping('/local/', 'echo'),
        mapping('/remote/', rig.backend.url),
        mapping('/real-ip/', rig.backend.url, {
          add_request_headers: { 'X-Real-IP': '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%' },
        }),
      ),
    });
    ({ server, url: rig.base } = await listen(gateway.app.callback()));
  });
  after(async () => {
    await close(server);
    await gateway.close();
    await close(rig.backend.server);
    await close(rig.auth.server);
  });
  return rig;
}

/** The forwarding names among those a server received, in any spelling. */
function forwardingIn(received: Received): string[] {
  return cgiNames(received.rawHeaders).filter((n) => FORWARDING_NAMES.includes(n));
}

describe("a client's own forwarding headers, with no proxy trusted in front", () => {
  const rig = useGateway(false);

  it('never reach a remote upstream, in the spelling proxies write or one a backend reads alike', async () => {
    const res = await send(rig.base, '/remote/x', { headers: { ...FORWARDING, ...lookalikesOf(FORWARDING) } });
    assert.equal(res.status, 200);
    const received = rig.backend.received.at(-1)!;
    assert.deepEqual(forwardingIn(received), [], received.rawHeaders.join(' '));
    for (const name of FORWARDING_NAMES) assert.equal(received.headers[name], undefined, name);
  });

  it('never reach the auth service, though allowed_request_headers names each of them', async () => {
    await send(rig.base, '/remote/x', { headers: { ...FORWARDING, ...lookalikesOf(FORWARDING) } });
    const asked = rig.auth.received.at(-1)!;
    assert.deepEqual(forwardingIn(asked), [], asked.rawHeaders.join(' '));
  });

  it('never reach an in-process module', async () => {
    const res = await send(rig.base, '/local/x', { headers: { ...FORWARDING, ...lookalikesOf(FORWARDING) } });
    assert.equal(res.status, 200);
    const seen = Object.keys(res.json().headers).map((h) => h.replace(/[_.]/g, '-'));
    assert.deepEqual(
      seen.filter((n) => FORWARDING_NAMES.includes(n)),
      [],
    );
  });

  it('leave the gateway its own X-Forwarded-For, -Proto and -Host, to the upstream and to the auth service', async () => {
    const claimed = {
      'X-Forwarded-Proto': 'https',
      'X-Forwarded-Host': 'admin.example',
      'X-Forwarded-For': '10.9.9.9',
    };
    await send(rig.base, '/remote/x', { headers: { ...FORWARDING, ...claimed, Host: 'shop.example' } });
    for (const received of [rig.backend.received.at(-1)!, rig.auth.received.at(-1)!]) {
      assert.equal(received.headers['x-forwarded-proto'], 'http');
      assert.equal(received.headers['x-forwarded-host'], 'shop.example');
      assert.equal(received.headers['x-forwarded-for'], '10.9.9.9, 127.0.0.1');
    }
    assert.equal(rig.backend.received.at(-1)!.headers.forwarded, 'for=127.0.0.1;host=shop.example;proto=http');
  });

  it('let the names that only resemble them through', async () => {
    await send(rig.base, '/remote/x', { headers: { ...FORWARDING, ...KEPT } });
    for (const received of [rig.backend.received.at(-1)!, rig.auth.received.at(-1)!]) {
      for (const [name, value] of Object.entries(KEPT)) assert.equal(received.headers[name.toLowerCase()], value, name);
    }
  });

  it("give a Mapping's X-Real-IP of the client's address alone, not joined to the client's own", async () => {
    await send(rig.base, '/real-ip/x', { headers: { 'X-Real-IP': '10.0.0.1', X_Real_IP: '10.0.0.2' } });
    const received = rig.backend.received.at(-1)!;
    assert.equal(received.headers['x-real-ip'], '127.0.0.1');
    assert.deepEqual(
      cgiNames(received.rawHeaders).filter((n) => n === 'x-real-ip'),
      ['x-real-ip'],
    );
  });
});

describe('forwarding headers from a proxy trusted with trustProxy', () => {
  const rig = useGateway(true);

  it('reach the upstream, the auth service and an in-process module as the proxy wrote them', async () => {
    await send(rig.base, '/remote/x', { headers: FORWARDING });
    for (const received of [rig.backend.received.at(-1)!, rig.auth.received.at(-1)!]) {
      for (const [name, value] of Object.entries(FORWARDING))
        assert.equal(received.headers[name.toLowerCase()], value, name);
    }
    const local = await send(rig.base, '/local/x', { headers: FORWARDING });
    for (const [name, value] of Object.entries(FORWARDING))
      assert.equal(local.json().headers[name.toLowerCase()], value, name);
  });

  it('never in a spelling the proxy does not write, which only the client can have sent', async () => {
    await send(rig.base, '/remote/x', { headers: { 'X-Real-IP': '203.0.113.7', ...lookalikesOf(FORWARDING) } });
    for (const received of [rig.backend.received.at(-1)!, rig.auth.received.at(-1)!]) {
      assert.deepEqual(forwardingIn(received), ['x-real-ip'], received.rawHeaders.join(' '));
      assert.equal(received.headers['x-real-ip'], '203.0.113.7');
    }
  });

  it("leave no client certificate or Envoy header through, a trusted proxy's neither", async () => {
    const claims = {
      'X-Forwarded-Client-Cert': 'Subject="CN=admin"',
      'Client-Cert': ':MIIB:',
      'X-Client-Cert': 'MIIB',
      'X-Envoy-Internal': 'true',
    };
    await send(rig.base, '/remote/x', { headers: { ...FORWARDING, ...claims } });
    for (const received of [rig.backend.received.at(-1)!, rig.auth.received.at(-1)!]) {
      for (const name of Object.keys(claims)) assert.equal(received.headers[name.toLowerCase()], undefined, name);
    }
  });

  it("leave X-Forwarded-For, -Proto and -Host the proxy's, with the gateway's hop appended", async () => {
    const proxy = {
      'X-Forwarded-Proto': 'https',
      'X-Forwarded-Host': 'shop.example',
      'X-Forwarded-For': '203.0.113.7',
    };
    await send(rig.base, '/remote/x', { headers: { ...FORWARDING, ...proxy } });
    for (const received of [rig.backend.received.at(-1)!, rig.auth.received.at(-1)!]) {
      assert.equal(received.headers['x-forwarded-proto'], 'https');
      assert.equal(received.headers['x-forwarded-host'], 'shop.example');
      assert.equal(received.headers['x-forwarded-for'], '203.0.113.7, 127.0.0.1');
    }
  });
});

describe("a client's own copies of the headers only Envoy sets, and of client certificates", () => {
  let backend: Awaited<ReturnType<typeof recordingUpstream>>;
  let authService: Awaited<ReturnType<typeof recordingUpstream>>;
  let gateway: Gateway;
  let server: Server;
  let base = '';
  /** What a client sends to pass for Envoy, or for a client certificate a proxy checked, in the spellings a backend reads alike. */
  const claims: Record<string, string> = {
    'X-Forwarded-Client-Cert': 'By=spiffe://shop/quote;Hash=00;Subject="CN=admin"',
    X_Forwarded_Client_Cert: 'Subject="CN=admin"',
    'Client-Cert': ':MIIBqDCCAU6gAwIBAgIBBzAKBggqhkjOPQQDAjA6:',
    'Client-Cert-Chain': ':MIIB5jCCAYugAwIBAgIBFzAKBggqhkjOPQQDAjBF:',
    'X-Client-Cert': 'MIIBqDCCAU6gAwIBAgIBBzAKBggqhkjOPQQDAjA6',
    'X-ARR-ClientCert': 'MIIBqDCCAU6gAwIBAgIBBzAKBggqhkjOPQQDAjA6',
    'X-Forwarded-Tls-Client-Cert': 'MIIBqDCCAU6gAwIBAgIBBzAKBggqhkjOPQQDAjA6',
    'X-Forwarded-Tls-Client-Cert-Info': 'Subject%3D%22CN%3Dadmin%22',
    'X.Client.Cert': 'MIIBqDCCAU6gAwIBAgIBBzAKBggqhkjOPQQDAjA6',
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
  const kept = { 'X-Envoyish': 'a', 'X-Forwarded-Client': 'b', 'X-Client-Certs': 'c' };
  const names = cgiNames;
  const certHeaders = [
    'x-forwarded-client-cert',
    'client-cert',
    'client-cert-chain',
    'x-client-cert',
    'x-arr-clientcert',
    'x-forwarded-tls-client-cert',
    'x-forwarded-tls-client-cert-info',
  ];
  const owned = (name: string) => name.startsWith('x-envoy-') || certHeaders.includes(name);

  before(async () => {
    backend = await recordingUpstream();
    authService = await recordingUpstream();
    gateway = createGateway({
      modules: registry(echoModule('echo')),
      config: configOf(
        {
          apiVersion: 'gateway/v1',
          kind: 'AuthService',
          name: 'mtls',
          auth_service: `127.0.0.1:${authService.port}`,
          timeout_ms: NO_BOUND_MS,
          allowed_request_headers: [...certHeaders, 'x-envoy-internal'],
        },
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
    assert.deepEqual(
      received.filter((n) => n in { 'x-envoyish': 1, 'x-forwarded-client': 1, 'x-client-certs': 1 }),
      ['x-envoyish', 'x-forwarded-client', 'x-client-certs'],
    );
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
    assert.deepEqual(
      Object.keys(res.json().headers)
        .map((h) => h.replace(/[_.]/g, '-'))
        .filter(owned),
      [],
    );
  });

  it("still carry what a Mapping's add_request_headers sets", async () => {
    await send(base, '/tagged/x', { headers: { 'X-Envoy-Original-Path': '/admin/' } });
    assert.equal(backend.received.at(-1)!.headers['x-envoy-original-path'], '/tagged/');
  });
});
