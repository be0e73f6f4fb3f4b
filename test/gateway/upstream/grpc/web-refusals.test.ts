/**
 * The gateway's refusals of gRPC-Web calls, as gRPC-Web answers: no
 * credentials and a denial from the auth service as UNAUTHENTICATED and
 * PERMISSION_DENIED in the headers of a trailers-only answer, with
 * gRPC-Web's content type, nothing sent upstream; and a deadline that
 * passes while the answer streams, ending it with DEADLINE_EXCEEDED in the
 * trailer frame.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen, type RunningServer } from '../../../../src/gatehouse';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { createAuthStage } from '../../../../src/gateway/stages/auth-stage';
import { startEchoServer, type EchoServer } from '../../../support/grpc-echo';
import { frame, grpcWebCall } from '../../../support/grpc-web-client';
import { startBasicAuthStandIn } from '../../../support/basic-auth-stand-in';
import { memoryLogger } from '../../../support/memory-logger';
import { configOf, mapping } from '../../../support/records';
import { close } from '../../../support/server';

const BINARY = { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' };
const TEXT = { 'content-type': 'application/grpc-web-text', accept: 'application/grpc-web-text', 'x-grpc-web': '1' };

describe("the gateway's refusals of gRPC-Web calls", () => {
  let upstream: EchoServer;
  let auth: Server;
  let gateway: Gateway;
  let server: RunningServer;
  let port: number;

  before(async () => {
    upstream = await startEchoServer();
    auth = await startBasicAuthStandIn();
    gateway = createGateway({
      config: configOf(
        { apiVersion: 'gateway/v1', kind: 'Module', name: 'ambassador', config: { enable_grpc_web: true } },
        mapping('/test.Echo/', upstream.address, { grpc: true, rewrite: '' }),
        {
          apiVersion: 'gateway/v1',
          kind: 'AuthService',
          name: 'auth',
          auth_service: `127.0.0.1:${(auth.address() as AddressInfo).port}`,
          allowed_authorization_headers: ['x-travel-user'],
          timeout_ms: 5000,
        },
      ),
      stages: { auth: (record, modules) => createAuthStage(record, modules, { logger: memoryLogger() }) },
    });
    server = await listen(gateway.app.callback(), { host: '127.0.0.1', port: 0 });
    port = server.port;
  });
  beforeEach(() => {
    upstream.received.length = 0;
  });
  after(async () => {
    await server?.close(0);
    await gateway?.close();
    await upstream?.close();
    await close(auth);
  });

  it('answers a call without credentials UNAUTHENTICATED in gRPC-Web form, and sends nothing upstream', async () => {
    const answer = await grpcWebCall({ port, path: '/test.Echo/Unary', headers: TEXT, parts: [] });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'application/grpc-web-text+proto');
    assert.equal(answer.headers['grpc-status'], String(grpc.status.UNAUTHENTICATED));
    assert.equal(answer.headers['www-authenticate'], 'Basic realm="travel"');
    assert.equal(answer.raw.length, 0);
    assert.equal(upstream.received.length, 0);
  });

  it("answers a denied call PERMISSION_DENIED, the auth service's text as grpc-message", async () => {
    const answer = await grpcWebCall({
      port,
      http2: true,
      path: '/test.Echo/Unary',
      headers: { ...BINARY, authorization: 'Basic banned' },
      parts: [frame('{}')],
    });
    assert.equal(answer.headers['content-type'], 'application/grpc-web+proto');
    assert.equal(answer.headers['grpc-status'], String(grpc.status.PERMISSION_DENIED));
    assert.equal(answer.headers['grpc-message'], 'banned');
    assert.equal(upstream.received.length, 0);
  });

  it('passes an authenticated call, its user named to the upstream', async () => {
    const answer = await grpcWebCall({
      port,
      path: '/test.Echo/Unary',
      headers: { ...BINARY, authorization: 'Basic good', 'x-travel-user': 'mallory' },
      parts: [frame(JSON.stringify({ text: 'hi' }))],
    });
    assert.equal((JSON.parse(answer.messages[0]) as { user: string }).user, 'alice');
    assert.equal(answer.trailers['grpc-status'], '0');
  });

  it("ends a stream whose client's deadline passes with DEADLINE_EXCEEDED, cancelling the upstream", async () => {
    const cancelled = upstream.cancelled();
    const answer = await grpcWebCall({
      port,
      path: '/test.Echo/ServerStream',
      headers: { ...BINARY, authorization: 'Basic good', 'grpc-timeout': '1S' },
      parts: [frame(JSON.stringify({ text: 'wait', count: 2, delayMs: -1 }))],
    });
    assert.equal(answer.headers['content-type'], 'application/grpc-web+proto');
    // Once its first message came, the status is in the trailer frame; before it (a loaded machine), in the headers.
    if (answer.messages.length > 0) {
      assert.deepEqual(
        answer.messages.map((m) => (JSON.parse(m) as { text: string }).text),
        ['wait 0'],
      );
      assert.equal(answer.trailers['grpc-status'], String(grpc.status.DEADLINE_EXCEEDED));
      assert.equal(answer.framesAfterTrailers, 0);
      assert.equal((await cancelled).method, 'serverStream');
    } else {
      assert.equal(answer.headers['grpc-status'], String(grpc.status.DEADLINE_EXCEEDED));
    }
  });
});
