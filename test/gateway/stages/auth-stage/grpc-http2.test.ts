/**
 * The auth stage of an AuthService with `proto: grpc` for requests that
 * came over HTTP/2: the check says HTTP/2, with the request's real scheme
 * and authority, and no claim of the client's passes, as over HTTP/1.1.
 */
import assert from 'node:assert/strict';
import type { ClientHttp2Session } from 'node:http2';
import { listen, type RunningServer } from '../../../../src/gatehouse';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { createAuthStage } from '../../../../src/gateway/stages/auth-stage';
import { allowAlice, startExtAuthzServer, type ExtAuthzServer } from '../../../support/ext-authz-server';
import { h2Connect, h2Request } from '../../../support/http2-client';
import { memoryLogger } from '../../../support/memory-logger';
import { configOf, mapping } from '../../../support/records';
import { close } from '../../../support/server';
import { recordingUpstream } from '../../../support/upstreams';

describe('the auth stage, checking with a gRPC ext_authz service, for HTTP/2 requests', () => {
  let authz: ExtAuthzServer;
  let upstream: Awaited<ReturnType<typeof recordingUpstream>>;
  let gateway: Gateway;
  let server: RunningServer;
  let session: ClientHttp2Session;

  before(async () => {
    authz = await startExtAuthzServer();
    upstream = await recordingUpstream();
    gateway = createGateway({
      config: configOf(mapping('/orders/', upstream.url, { name: 'orders' }), {
        apiVersion: 'gateway/v1',
        kind: 'AuthService',
        name: 'ext-authz',
        auth_service: authz.address,
        proto: 'grpc',
        timeout_ms: 2000,
      }),
      stages: { auth: (record, modules) => createAuthStage(record, modules, { logger: memoryLogger() }) },
    });
    server = await listen(gateway.app.callback(), { host: '127.0.0.1', port: 0 });
    session = await h2Connect(`http://127.0.0.1:${server.port}`);
  });
  beforeEach(() => {
    authz.received.length = 0;
    upstream.received.length = 0;
    authz.answer = allowAlice;
  });
  after(async () => {
    session?.close();
    await server?.close(0);
    await gateway?.close();
    await close(upstream?.server);
    await authz?.close();
  });

  it('says HTTP/2 in the check, with the scheme of the connection and the :authority as the host', async () => {
    const res = await h2Request(session, '/orders/7?full=1', {
      headers: { ':authority': 'shop.example', ':scheme': 'https', 'x-forwarded-proto': 'https', 'x-tenant': 'acme' },
    });
    assert.equal(res.status, 200, res.text);
    const http = authz.received[0].attributes.request.http;
    assert.deepEqual(
      [http.method, http.path, http.host, http.scheme, http.protocol],
      ['GET', '/orders/7?full=1', 'shop.example', 'http', 'HTTP/2'],
    );
    assert.deepEqual(
      [http.headers[':authority'], http.headers[':path'], http.headers[':method'], http.headers['x-tenant']],
      ['shop.example', '/orders/7?full=1', 'GET', 'acme'],
    );
  });

  it("tells the upstream the user the check named, never the client's claim, and no pseudo-header", async () => {
    const res = await h2Request(session, '/orders/1', { headers: { 'x-travel-user': 'mallory' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(authz.received[0].attributes.request.http.headers['x-travel-user'], undefined);
    const received = upstream.received[0];
    assert.equal(received.headers['x-travel-user'], 'alice');
    assert.deepEqual(
      received.rawHeaders.filter((h, i) => i % 2 === 0 && h.startsWith(':')),
      [],
    );
  });

  it('answers 403 with the error body when the check denies, and the upstream sees nothing', async () => {
    authz.answer = () => ({ status: { code: 7 }, denied_response: { status: { code: 403 } } });
    const res = await h2Request(session, '/orders/1');
    assert.equal(res.status, 403, res.text);
    assert.equal(res.json().code, 403);
    assert.deepEqual(upstream.received, []);
  });
});
