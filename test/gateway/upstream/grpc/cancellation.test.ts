/**
 * A gRPC call's end, either way, through the gateway: a client that
 * cancels cancels the upstream's call; an upstream that resets its stream
 * ends the client's call with UNAVAILABLE; a deadline (the client's
 * `grpc-timeout`, the Mapping's `timeout_ms`) ends both with
 * DEADLINE_EXCEEDED, before the answer or in the middle of it; and a
 * reader that stops holds its upstream back instead of being buffered for.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import http2, { type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { listen, type RunningServer } from '../../../../src/gatehouse';
import { createGateway, type Gateway } from '../../../../src/gateway';
import {
  echoClient,
  startEchoServer,
  type EchoClient,
  type EchoMessage,
  type EchoServer,
} from '../../../support/grpc-echo';
import { h2Connect } from '../../../support/http2-client';
import { configOf, mapping } from '../../../support/records';

/** One gRPC message: its 5-byte prefix and the JSON. */
function frame(message: object): Buffer {
  const body = Buffer.from(JSON.stringify(message));
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(body.length, 1);
  return Buffer.concat([prefix, body]);
}

/** An upstream that resets every stream: before its headers on `/reset.Echo/Before`, after one message otherwise. */
async function startResettingUpstream(): Promise<Http2Server> {
  const server = http2.createServer();
  server.on('stream', (stream: ServerHttp2Stream, headers) => {
    stream.on('error', () => undefined);
    if (headers[':path'] === '/test.Echo/Before') {
      stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      return;
    }
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
    stream.write(frame({ text: 'first' }), () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function statusOf(
  call: grpc.ClientReadableStream<EchoMessage>,
): Promise<{ status: grpc.StatusObject; texts: string[] }> {
  const texts: string[] = [];
  call.on('data', (m: EchoMessage) => texts.push(m.text!));
  call.on('error', () => undefined);
  return new Promise((resolve) => call.on('status', (status) => resolve({ status, texts })));
}

describe('the end of a gRPC call through the gateway', () => {
  let upstream: EchoServer;
  let resetting: Http2Server;
  let gateway: Gateway;
  let server: RunningServer;
  let client: EchoClient;

  before(async () => {
    upstream = await startEchoServer();
    resetting = await startResettingUpstream();
    gateway = createGateway({
      config: configOf(
        mapping('/test.Echo/', upstream.address, { grpc: true, rewrite: '' }),
        mapping('/slow.Echo/', upstream.address, { grpc: true, rewrite: '/test.Echo/', timeout_ms: 300 }),
        mapping('/reset.Echo/', `127.0.0.1:${(resetting.address() as AddressInfo).port}`, {
          grpc: true,
          rewrite: '/test.Echo/',
        }),
      ),
    });
    server = await listen(gateway.app.callback(), { host: '127.0.0.1', port: 0 });
    client = echoClient(`127.0.0.1:${server.port}`);
  });
  after(async () => {
    client?.close();
    await server?.close(0);
    await gateway?.close();
    await upstream?.close();
    await new Promise((resolve) => resetting?.close(resolve));
  });

  it("cancels the upstream's call when the client cancels its own", async () => {
    const call = client.serverStream({ text: 'wait', count: 2, delayMs: -1 }, new grpc.Metadata());
    const ended = statusOf(call);
    await new Promise((resolve) => call.once('data', resolve));
    const cancelled = upstream.cancelled();
    call.cancel();
    assert.equal((await cancelled).method, 'serverStream');
    assert.equal((await ended).status.code, grpc.status.CANCELLED);
  });

  it("answers DEADLINE_EXCEEDED when the client's grpc-timeout passes before the answer, and cancels the upstream", async () => {
    // Node's own client: a grpc-js client would end the call at its deadline before the gateway could answer.
    const session = await h2Connect(`http://127.0.0.1:${server.port}`);
    const cancelled = upstream.cancelled();
    const stream = session.request({
      ':method': 'POST',
      ':path': '/test.Echo/Unary',
      'content-type': 'application/grpc',
      te: 'trailers',
      'grpc-timeout': '150m',
    });
    stream.end(frame({ delayMs: 60_000 }));
    const [headers, flags] = await new Promise<[http2.IncomingHttpHeaders, number]>((resolve) =>
      stream.once('response', (h, f) => resolve([h, f])),
    );
    session.close();
    assert.equal(headers[':status'], 200);
    assert.equal(headers['grpc-status'], '4');
    assert.match(String(headers['grpc-message']), /150 ms/);
    // Trailers-only: the headers end the stream.
    assert.equal(flags & http2.constants.NGHTTP2_FLAG_END_STREAM, http2.constants.NGHTTP2_FLAG_END_STREAM);
    assert.equal((await cancelled).method, 'unary');
  });

  it("ends a stream under way with DEADLINE_EXCEEDED when the Mapping's timeout_ms passes", async () => {
    const cancelled = upstream.cancelled();
    const call = echoClient(`127.0.0.1:${server.port}`);
    const stream = call.makeServerStreamRequest(
      '/slow.Echo/ServerStream',
      (m: EchoMessage) => Buffer.from(JSON.stringify(m)),
      (b: Buffer) => JSON.parse(b.toString()) as EchoMessage,
      { text: 'tick', count: 2, delayMs: -1 },
    );
    const { status, texts } = await statusOf(stream);
    call.close();
    assert.deepEqual(texts, ['tick 0']);
    assert.equal(status.code, grpc.status.DEADLINE_EXCEEDED);
    assert.match(status.details, /300 ms/);
    assert.equal((await cancelled).method, 'serverStream');
  });

  it('answers UNAVAILABLE when the upstream resets the stream before its answer', async () => {
    const call = client.makeUnaryRequest(
      '/reset.Echo/Before',
      (m: EchoMessage) => Buffer.from(JSON.stringify(m)),
      (b: Buffer) => JSON.parse(b.toString()) as EchoMessage,
      {},
      () => undefined,
    );
    const status = await new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    assert.equal(status.code, grpc.status.UNAVAILABLE);
  });

  it('ends a stream under way with UNAVAILABLE when the upstream resets it', async () => {
    const stream = client.makeServerStreamRequest(
      '/reset.Echo/ServerStream',
      (m: EchoMessage) => Buffer.from(JSON.stringify(m)),
      (b: Buffer) => JSON.parse(b.toString()) as EchoMessage,
      {},
    );
    const { status, texts } = await statusOf(stream);
    assert.deepEqual(texts, ['first']);
    assert.equal(status.code, grpc.status.UNAVAILABLE);
    assert.match(status.details, /reset the stream/);
  });

  it('holds the upstream back while the client does not read, and passes every message once it does', async () => {
    const size = 64 * 1024;
    const count = 256; // 16 MiB in all
    upstream.sent = 0;
    const stream = client.serverStream({ size, count }, new grpc.Metadata());
    let read = 0;
    stream.on('data', () => {
      read++;
    });
    stream.pause();
    await upstream.heldBack();
    // Whatever the timing, the gateway holds no more than its streams' windows and buffers: far less than the whole.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(
      upstream.sent < count / 4,
      `the upstream wrote ${upstream.sent} of ${count} answers to a reader that read none`,
    );
    const { status } = await new Promise<{ status: grpc.StatusObject }>((resolve) => {
      stream.on('status', (s) => resolve({ status: s }));
      stream.resume();
    });
    assert.equal(status.code, grpc.status.OK);
    assert.equal(read, count);
  });
});
