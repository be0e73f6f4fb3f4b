/**
 * gRPC-Web through the gateway mounted in a host's own Koa app, whose
 * response handling is Koa's and pipes a streamed body: the answer streams
 * there as it does alone, each message in its frame, then the trailer frame.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import mount from 'koa-mount';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { startEchoServer, type EchoServer } from '../../../support/grpc-echo';
import { frame, grpcWebCall } from '../../../support/grpc-web-client';
import { configOf, mapping } from '../../../support/records';

const BINARY = { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' };

describe('gRPC-Web through the gateway mounted in a Koa app', () => {
  let upstream: EchoServer;
  let gateway: Gateway;
  let server: http.Server;

  before(async () => {
    upstream = await startEchoServer();
    gateway = createGateway({
      config: configOf(
        { apiVersion: 'gateway/v1', kind: 'Module', name: 'ambassador', config: { enable_grpc_web: true } },
        mapping('/test.Echo/', upstream.address, { grpc: true, rewrite: '' }),
      ),
    });
    const host = new Koa();
    host.use(mount(gateway.app));
    server = http.createServer(host.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await gateway?.close();
    await upstream?.close();
  });

  it('streams a server-streaming call, each message in its frame, then the trailers', async () => {
    const answer = await grpcWebCall({
      port: (server.address() as AddressInfo).port,
      path: '/test.Echo/ServerStream',
      headers: BINARY,
      parts: [frame(JSON.stringify({ text: 'n', count: 3 }))],
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'application/grpc-web+proto');
    assert.deepEqual(
      answer.messages.map((m) => (JSON.parse(m) as { text: string }).text),
      ['n 0', 'n 1', 'n 2'],
    );
    assert.equal(answer.trailers['grpc-status'], '0');
    assert.equal(answer.framesAfterTrailers, 0);
  });
});
