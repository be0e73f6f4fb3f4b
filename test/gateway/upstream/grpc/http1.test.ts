/**
 * A gRPC call over HTTP/1.1, which carries no trailers most clients read:
 * answered by the gateway itself, at once, with a trailers-only gRPC
 * status in its headers that says why, and nothing sent upstream; a
 * gRPC-Web call over HTTP/1.1 still passes where the Module enables it.
 */
import assert from 'node:assert/strict';
import { request, type IncomingHttpHeaders } from 'node:http';
import { listen, type RunningServer } from '../../../../src/gatehouse';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { startEchoServer, type EchoServer } from '../../../support/grpc-echo';
import { frame, grpcWebCall } from '../../../support/grpc-web-client';
import { configOf, mapping } from '../../../support/records';

interface Http1Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  trailers: NodeJS.Dict<string>;
}

/** A gRPC call written over HTTP/1.1 by hand, as a client that knows no better sends it. */
function http1Call(port: number, headers: Record<string, string>): Promise<Http1Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/test.Echo/Unary', method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          trailers: res.trailers,
        }),
      );
    });
    req.on('error', reject);
    req.end(frame(JSON.stringify({ text: 'over HTTP/1.1' })));
  });
}

describe('a gRPC call over HTTP/1.1', () => {
  let upstream: EchoServer;
  let gateway: Gateway;
  let server: RunningServer;

  before(async () => {
    upstream = await startEchoServer();
    gateway = createGateway({
      config: configOf(
        { apiVersion: 'gateway/v1', kind: 'Module', name: 'ambassador', config: { enable_grpc_web: true } },
        mapping('/test.Echo/', upstream.address, { grpc: true, rewrite: '' }),
      ),
    });
    server = await listen(gateway.app.callback(), { host: '127.0.0.1', port: 0 });
  });
  beforeEach(() => {
    upstream.received.length = 0;
  });
  after(async () => {
    await server?.close(0);
    await gateway?.close();
    await upstream?.close();
  });

  for (const te of [{}, { te: 'trailers', connection: 'te' }] as Record<string, string>[]) {
    it(`is answered in its headers that it needs HTTP/2, and never reaches the upstream${'te' in te ? ' (with TE: trailers)' : ''}`, async () => {
      const answer = await http1Call(server.port, { 'content-type': 'application/grpc', ...te });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['content-type'], 'application/grpc');
      assert.equal(answer.headers['grpc-status'], '2');
      assert.match(String(answer.headers['grpc-message']), /needs HTTP\/2/);
      assert.equal(answer.body.length, 0);
      assert.deepEqual(upstream.received, []);
    });
  }

  it('passes a gRPC-Web call over HTTP/1.1, as the Module enables', async () => {
    const answer = await grpcWebCall({
      port: server.port,
      path: '/test.Echo/Unary',
      headers: { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' },
      parts: [frame(JSON.stringify({ text: 'web' }))],
    });
    assert.equal(answer.trailers['grpc-status'], '0');
    assert.equal(upstream.received.length, 1);
  });
});
