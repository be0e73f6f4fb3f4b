/**
 * gRPC-Web calls through the gateway, framed by hand as a browser's client
 * frames them, over HTTP/1.1 and HTTP/2, to a plain grpc-js upstream: with
 * the Module's `enable_grpc_web`, binary and text calls, unary and
 * server-streaming, reach it as gRPC, and their answers come back as
 * gRPC-Web with the trailers in the body's trailer frame; the gateway's own
 * refusals come as gRPC-Web statuses; CORS follows the Mapping's `cors`.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { createServer, type Http2Server, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { listen, type RunningServer } from '../../../../src/gatehouse';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { startEchoServer, type EchoServer } from '../../../support/grpc-echo';
import { frame, grpcWebCall } from '../../../support/grpc-web-client';
import { configOf, mapping } from '../../../support/records';

const ORIGIN = 'https://app.example';
const CORS = {
  origins: ORIGIN,
  methods: 'POST',
  headers: 'content-type,x-grpc-web,x-user-agent,grpc-timeout',
  exposed_headers: 'grpc-status,grpc-message',
};
const BINARY = { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' };
const TEXT = { 'content-type': 'application/grpc-web-text', accept: 'application/grpc-web-text', 'x-grpc-web': '1' };

const json = (value: unknown): string => JSON.stringify(value);

/** What the raw upstream received of its one call. */
interface RawCall {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A bare h2c gRPC upstream: keeps each call's headers and body, answers one message and trailers. */
async function startRawUpstream(calls: RawCall[]): Promise<Http2Server> {
  const raw = createServer();
  raw.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      calls.push({ headers, body: Buffer.concat(chunks) });
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () =>
        stream.sendTrailers({ 'grpc-status': '0', 'X-Raw-Trailer': 'a', 'x-two': 'b' }),
      );
      stream.end(frame('raw answer'));
    });
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  return raw;
}

describe('gRPC-Web calls through the gateway', () => {
  let upstream: EchoServer;
  let gateway: Gateway;
  let server: RunningServer;
  let port: number;
  let raw: Http2Server;
  const rawCalls: RawCall[] = [];

  before(async () => {
    upstream = await startEchoServer();
    raw = await startRawUpstream(rawCalls);
    gateway = createGateway({
      config: configOf(
        { apiVersion: 'gateway/v1', kind: 'Module', name: 'ambassador', config: { enable_grpc_web: true } },
        mapping('/test.Echo/', upstream.address, { grpc: true, rewrite: '', cors: CORS }),
        mapping('/test.Gone/', '127.0.0.1:1', { grpc: true, rewrite: '' }),
        mapping('/test.Raw/', `127.0.0.1:${(raw.address() as AddressInfo).port}`, { grpc: true, rewrite: '' }),
      ),
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
    await new Promise((resolve) => raw?.close(resolve));
  });

  for (const http2 of [false, true]) {
    const over = http2 ? 'over HTTP/2' : 'over HTTP/1.1';

    it(`passes a binary unary call ${over}, its trailers in the trailer frame`, async () => {
      const answer = await grpcWebCall({
        port,
        http2,
        path: '/test.Echo/Unary',
        headers: { ...BINARY, 'x-client': 'mine' },
        parts: [frame(json({ text: 'hi' }))],
      });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['content-type'], 'application/grpc-web+proto');
      assert.equal(answer.headers['x-server-initial'], 'hello');
      assert.equal(answer.headers['grpc-status'], undefined);
      assert.equal(answer.messages.length, 1);
      const message = JSON.parse(answer.messages[0]) as { text: string; metadata: Record<string, string> };
      assert.equal(message.text, 'hi');
      assert.equal(message.metadata['x-client'], 'mine');
      assert.equal(answer.trailers['grpc-status'], '0');
      assert.equal(answer.trailers['x-server-trailer'], 'bye');
      assert.ok(answer.trailerLines.every((line) => line === '' || /^[a-z0-9-]+:/.test(line)));
      assert.equal(answer.framesAfterTrailers, 0);
    });

    it(`passes a text call ${over}, its base64 split inside a quartet, and answers in base64`, async () => {
      const encoded = frame(json({ text: 'in base64', count: 3 })).toString('base64');
      const answer = await grpcWebCall({
        port,
        http2,
        path: '/test.Echo/ServerStream',
        headers: TEXT,
        parts: [encoded.slice(0, 6), encoded.slice(6, 7), encoded.slice(7)],
      });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['content-type'], 'application/grpc-web-text+proto');
      assert.match(answer.raw.toString('latin1'), /^[A-Za-z0-9+/=]+$/);
      assert.deepEqual(
        answer.messages.map((m) => (JSON.parse(m) as { text: string }).text),
        ['in base64 0', 'in base64 1', 'in base64 2'],
      );
      assert.equal(answer.trailers['grpc-status'], '0');
      assert.equal(answer.trailers['x-server-trailer'], 'bye');
    });
  }

  it('streams a binary server-streaming call, each message in its frame, then the trailers', async () => {
    const answer = await grpcWebCall({
      port,
      path: '/test.Echo/ServerStream',
      headers: BINARY,
      parts: [frame(json({ text: 'n', count: 4 }))],
    });
    assert.deepEqual(
      answer.messages.map((m) => (JSON.parse(m) as { text: string }).text),
      ['n 0', 'n 1', 'n 2', 'n 3'],
    );
    assert.deepEqual(answer.trailerLines.slice(0, 1), ['grpc-status:0']);
    assert.equal(answer.framesAfterTrailers, 0);
  });

  it('sends the upstream a plain gRPC call, the text body decoded, and frames its trailers in order', async () => {
    rawCalls.length = 0;
    const message = frame('to the raw upstream, decoded');
    const answer = await grpcWebCall({
      port,
      path: '/test.Raw/Call',
      headers: { ...TEXT, 'content-length': String(message.toString('base64').length) },
      parts: [message.toString('base64')],
    });
    const seen = rawCalls[0];
    assert.equal(seen.headers['content-type'], 'application/grpc');
    assert.equal(seen.headers.te, 'trailers');
    assert.equal(seen.headers['grpc-accept-encoding'], 'identity');
    assert.equal(seen.headers['content-length'], undefined);
    assert.deepEqual(seen.body, message);
    assert.deepEqual(answer.messages, ['raw answer']);
    assert.deepEqual(answer.trailerLines, ['grpc-status:0', 'x-raw-trailer:a', 'x-two:b', '']);
  });

  it("passes an upstream's error status, message and trailing metadata", async () => {
    const answer = await grpcWebCall({
      port,
      path: '/test.Echo/ServerStream',
      headers: BINARY,
      parts: [frame(json({ fail: grpc.status.NOT_FOUND }))],
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'application/grpc-web+proto');
    const status = answer.trailers['grpc-status'] ?? answer.headers['grpc-status'];
    const message = answer.trailers['grpc-message'] ?? answer.headers['grpc-message'];
    assert.equal(status, String(grpc.status.NOT_FOUND));
    assert.equal(decodeURIComponent(String(message)), 'refused by the echo service: é%');
  });

  it("answers an upstream's trailers-only answer in its headers, as Envoy passes it", async () => {
    const answer = await grpcWebCall({
      port,
      path: '/test.Echo/Unary',
      headers: BINARY,
      parts: [frame(json({ fail: grpc.status.NOT_FOUND }))],
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'application/grpc-web+proto');
    assert.equal(answer.headers['grpc-status'], String(grpc.status.NOT_FOUND));
    assert.equal(answer.headers['x-server-trailer'], 'bye');
    assert.equal(answer.raw.length, 0);
  });

  it("gives the gateway's own refusals as gRPC-Web statuses: no route, upstream unreachable", async () => {
    const none = await grpcWebCall({ port, path: '/test.Nope/Unary', headers: TEXT, parts: [] });
    assert.equal(none.status, 200);
    assert.equal(none.headers['content-type'], 'application/grpc-web-text+proto');
    assert.equal(none.headers['grpc-status'], String(grpc.status.UNIMPLEMENTED));
    assert.equal(none.raw.length, 0);
    const gone = await grpcWebCall({
      port,
      http2: true,
      path: '/test.Gone/Unary',
      headers: BINARY,
      parts: [frame(json({}))],
    });
    assert.equal(gone.headers['content-type'], 'application/grpc-web+proto');
    assert.equal(gone.headers['grpc-status'], String(grpc.status.UNAVAILABLE));
    assert.equal(gone.headers['grpc-message'], 'the upstream service is unavailable');
  });

  it('refuses a text body that is not base64 with INTERNAL, before the upstream hears of it', async () => {
    const answer = await grpcWebCall({ port, path: '/test.Echo/Unary', headers: TEXT, parts: ['AAAA*AAA'] });
    assert.equal(answer.headers['grpc-status'], String(grpc.status.INTERNAL));
    assert.equal(answer.headers['grpc-message'], 'the gRPC-Web text body is not base64 in whole quartets');
  });

  it("answers a browser's preflight and exposes the status headers as the Mapping's cors lists them", async () => {
    const preflight = await grpcWebCall({
      port,
      method: 'OPTIONS',
      path: '/test.Echo/Unary',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-grpc-web,x-user-agent,grpc-timeout',
      },
      parts: [],
    });
    assert.equal(preflight.headers['access-control-allow-origin'], ORIGIN);
    assert.match(String(preflight.headers['access-control-allow-headers']), /x-grpc-web/);
    assert.match(String(preflight.headers['access-control-allow-headers']), /grpc-timeout/);
    const call = await grpcWebCall({
      port,
      path: '/test.Echo/Unary',
      headers: { ...BINARY, origin: ORIGIN },
      parts: [frame(json({ text: 'cors' }))],
    });
    assert.equal(call.headers['access-control-allow-origin'], ORIGIN);
    assert.match(String(call.headers['access-control-expose-headers']), /grpc-status/);
    assert.match(String(call.headers['access-control-expose-headers']), /grpc-message/);
    assert.equal(call.trailers['grpc-status'], '0');
  });
});

describe('gRPC-Web calls where the Module does not enable them', () => {
  let upstream: EchoServer;
  let gateway: Gateway;
  let server: RunningServer;

  before(async () => {
    upstream = await startEchoServer();
    gateway = createGateway({
      config: configOf(mapping('/test.Echo/', upstream.address, { grpc: true, rewrite: '' })),
    });
    server = await listen(gateway.app.callback(), { host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await server?.close(0);
    await gateway?.close();
    await upstream?.close();
  });

  it('passes the call on untranslated: the upstream answers in its own form, no trailer frame', async () => {
    const answer = await grpcWebCall({
      port: server.port,
      http2: true,
      path: '/test.Echo/Unary',
      headers: BINARY,
      parts: [frame(json({ text: 'hi' }))],
    });
    // grpc-js serves any application/grpc* type; its answer is gRPC's, its status in HTTP/2 trailers.
    assert.equal(answer.headers['content-type'], 'application/grpc+proto');
    assert.equal(answer.messages.length, 1);
    assert.deepEqual(answer.trailers, {});
  });

  it("answers the gateway's own refusal as HTTP, not as a gRPC status", async () => {
    const answer = await grpcWebCall({ port: server.port, path: '/test.Nope/Unary', headers: BINARY, parts: [] });
    assert.equal(answer.status, 404);
    assert.equal(answer.headers['grpc-status'], undefined);
    assert.match(String(answer.headers['content-type']), /json/);
  });
});
