/**
 * A client's messages through the gateway to an upstream that does not
 * read them: the gateway holds the client back (HTTP/2 flow control, each
 * side's window) rather than take its messages and keep them, and passes
 * every byte on once the upstream reads.
 */
import assert from 'node:assert/strict';
import http2, { type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { listen, type RunningServer } from '../../../../src/gatehouse';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { h2Connect } from '../../../support/http2-client';
import { configOf, mapping } from '../../../support/records';

const CHUNK = 64 * 1024;
const CHUNKS = 256; // 16 MiB in all

/** An upstream that reads nothing of a call until `release`, then answers how many bytes it read. */
async function startHoldingUpstream(): Promise<{ server: Http2Server; release(): void; held: Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: () => void;
  const heldCall = new Promise<void>((resolve) => (held = resolve));
  const server = http2.createServer();
  server.on('stream', (stream: ServerHttp2Stream) => {
    stream.on('error', () => undefined);
    stream.pause();
    held();
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'x-bytes': String(bytes) }));
      stream.end();
    });
    void released.then(() => stream.resume());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, release, held: heldCall };
}

describe('a gRPC client streaming to an upstream that does not read', () => {
  let upstream: Awaited<ReturnType<typeof startHoldingUpstream>>;
  let gateway: Gateway;
  let server: RunningServer;

  before(async () => {
    upstream = await startHoldingUpstream();
    gateway = createGateway({
      config: configOf(
        mapping('/hold.Up/', `127.0.0.1:${(upstream.server.address() as AddressInfo).port}`, {
          grpc: true,
          rewrite: '',
          timeout_ms: 0,
        }),
      ),
    });
    server = await listen(gateway.app.callback(), { host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await server?.close(0);
    await gateway?.close();
    await new Promise((resolve) => upstream?.server.close(resolve));
  });

  it('is held back by the windows between them, and every byte reaches the upstream once it reads', async () => {
    const session = await h2Connect(`http://127.0.0.1:${server.port}`);
    try {
      const stream = session.request({
        ':method': 'POST',
        ':path': '/hold.Up/Call',
        'content-type': 'application/grpc',
        te: 'trailers',
      });
      let trailers: http2.IncomingHttpHeaders = {};
      stream.on('trailers', (t) => (trailers = t));
      stream.resume();
      const ended = new Promise((resolve) => stream.once('close', resolve));
      let taken = 0;
      const chunk = Buffer.alloc(CHUNK, 1);
      for (let i = 0; i < CHUNKS; i++) stream.write(chunk, () => taken++);
      stream.end();
      await upstream.held;
      // Whatever the timing, the gateway holds no more than its streams' windows and buffers: far less than the whole.
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.ok(taken < CHUNKS / 4, `the gateway took ${taken} of ${CHUNKS} chunks the upstream did not read`);
      upstream.release();
      await ended;
      assert.equal(trailers['grpc-status'], '0');
      assert.equal(trailers['x-bytes'], String(CHUNK * CHUNKS));
    } finally {
      session.destroy();
    }
  });
});
