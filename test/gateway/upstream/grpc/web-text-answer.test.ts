/**
 * A gRPC-Web text answer through the gateway, base64 frame by frame as
 * Envoy's grpc_web filter encodes it: each message frame and the trailer
 * frame a unit of its own, with its own padding, however the upstream's
 * writes split its frames, over HTTP/1.1 and HTTP/2.
 */
import assert from 'node:assert/strict';
import { createServer, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { listen, type RunningServer } from '../../../../src/gatehouse';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { frame, grpcWebCall, readFrames } from '../../../support/grpc-web-client';
import { configOf, mapping } from '../../../support/records';

const TEXT = { 'content-type': 'application/grpc-web-text', accept: 'application/grpc-web-text', 'x-grpc-web': '1' };
const FIRST = frame('the first message, long enough to be split');
const SECOND = frame('2nd');

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** An h2c gRPC upstream that writes its two answer frames in awkward pieces: a frame head cut, frames sharing a write. */
async function startSplittingUpstream(): Promise<Http2Server> {
  const server = createServer();
  server.on('stream', (stream) => {
    stream.resume();
    stream.on('end', async () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': 'done' }));
      const bytes = Buffer.concat([FIRST, SECOND]);
      for (const [from, to] of [
        [0, 3],
        [3, 11],
        [11, FIRST.length + 2],
        [FIRST.length + 2, bytes.length],
      ]) {
        stream.write(bytes.subarray(from, to));
        await nextTurn();
      }
      stream.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

describe('a gRPC-Web text answer through the gateway', () => {
  let upstream: Http2Server;
  let gateway: Gateway;
  let server: RunningServer;

  before(async () => {
    upstream = await startSplittingUpstream();
    gateway = createGateway({
      config: configOf(
        { apiVersion: 'gateway/v1', kind: 'Module', name: 'ambassador', config: { enable_grpc_web: true } },
        mapping('/test.Split/', `127.0.0.1:${(upstream.address() as AddressInfo).port}`, { grpc: true, rewrite: '' }),
      ),
    });
    server = await listen(gateway.app.callback(), { host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await server?.close(0);
    await gateway?.close();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  for (const http2 of [false, true]) {
    it(`encodes each frame as a base64 unit of its own ${http2 ? 'over HTTP/2' : 'over HTTP/1.1'}, the trailer frame last`, async () => {
      const answer = await grpcWebCall({
        port: server.port,
        http2,
        path: '/test.Split/Call',
        headers: TEXT,
        parts: [],
      });
      assert.equal(answer.headers['content-type'], 'application/grpc-web-text+proto');
      const text = answer.raw.toString('latin1');
      const messages = FIRST.toString('base64') + SECOND.toString('base64');
      assert.ok(text.startsWith(messages), text);
      // The trailer frame, decoded on its own: the unit after the messages'.
      const trailer = readFrames(Buffer.from(text.slice(messages.length), 'base64'));
      assert.deepEqual(trailer.messages, []);
      assert.equal(trailer.trailers['grpc-status'], '0');
      assert.equal(trailer.trailers['grpc-message'], 'done');
      assert.deepEqual(answer.messages, ['the first message, long enough to be split', '2nd']);
    });
  }
});
