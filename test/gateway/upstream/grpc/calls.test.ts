/**
 * gRPC calls through the gateway's h2c port to a grpc-js upstream, made by a
 * grpc-js client: the four call kinds pass with their metadata both ways and
 * their trailers back, and the upstream's own statuses reach the client as
 * it sent them.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { constants, type IncomingHttpHeaders } from 'node:http2';
import { listen, type RunningServer } from '../../../../src/gatehouse';
import { createGateway, type Gateway } from '../../../../src/gateway';
import {
  echoClient,
  startEchoServer,
  unary,
  type EchoClient,
  type EchoMessage,
  type EchoServer,
} from '../../../support/grpc-echo';
import { h2Connect } from '../../../support/http2-client';
import { configOf, mapping } from '../../../support/records';

describe('gRPC calls through the gateway', () => {
  let upstream: EchoServer;
  let gateway: Gateway;
  let server: RunningServer;
  let client: EchoClient;

  before(async () => {
    upstream = await startEchoServer();
    gateway = createGateway({
      config: configOf(mapping('/test.Echo/', upstream.address, { grpc: true, rewrite: '' })),
    });
    server = await listen(gateway.app.callback(), { host: '127.0.0.1', port: 0 });
    client = echoClient(`127.0.0.1:${server.port}`);
  });
  beforeEach(() => {
    upstream.received.length = 0;
  });
  after(async () => {
    client?.close();
    await server?.close(0);
    await gateway?.close();
    await upstream?.close();
  });

  it('passes a unary call, its metadata both ways and its trailers', async () => {
    const metadata = new grpc.Metadata();
    metadata.set('x-client', 'mine');
    metadata.set('x-travel-user', 'mallory');
    const outcome = await unary(client, { text: 'hi' }, metadata);
    assert.equal(outcome.error, undefined);
    assert.equal(outcome.answer?.text, 'hi');
    assert.equal(outcome.answer?.metadata?.['x-client'], 'mine');
    // No AuthService named anyone: a client's claim never reaches the upstream.
    assert.equal(outcome.answer?.user, undefined);
    assert.deepEqual(outcome.initial?.get('x-server-initial'), ['hello']);
    assert.equal(outcome.status.code, grpc.status.OK);
    assert.deepEqual(outcome.status.metadata.get('x-server-trailer'), ['bye']);
  });

  it("passes the upstream's own error status, its message and trailing metadata", async () => {
    const outcome = await unary(client, { fail: grpc.status.NOT_FOUND });
    assert.equal(outcome.status.code, grpc.status.NOT_FOUND);
    assert.equal(outcome.status.details, 'refused by the echo service: é%');
    assert.deepEqual(outcome.status.metadata.get('x-server-trailer'), ['bye']);
  });

  it("passes an upstream's trailers-only answer as one frame that ends the stream", async () => {
    const session = await h2Connect(`http://127.0.0.1:${server.port}`);
    const body = Buffer.from(JSON.stringify({ fail: grpc.status.NOT_FOUND }));
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(body.length, 1);
    const stream = session.request({
      ':method': 'POST',
      ':path': '/test.Echo/Unary',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    stream.end(Buffer.concat([prefix, body]));
    const [headers, flags] = await new Promise<[IncomingHttpHeaders, number]>((resolve) =>
      stream.once('response', (h, f) => resolve([h, f])),
    );
    session.close();
    assert.equal(headers[':status'], 200);
    assert.equal(headers['grpc-status'], String(grpc.status.NOT_FOUND));
    // As the upstream encoded it.
    assert.equal(decodeURIComponent(String(headers['grpc-message'])), 'refused by the echo service: é%');
    assert.equal(headers['x-server-trailer'], 'bye');
    assert.equal(flags & constants.NGHTTP2_FLAG_END_STREAM, constants.NGHTTP2_FLAG_END_STREAM);
  });

  it('streams the answers of a server-streaming call, then its trailers', async () => {
    const call = client.serverStream({ text: 'tick', count: 5 }, new grpc.Metadata());
    const texts: string[] = [];
    call.on('data', (m: EchoMessage) => texts.push(m.text!));
    const status = await new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    assert.equal(status.code, grpc.status.OK);
    assert.deepEqual(texts, ['tick 0', 'tick 1', 'tick 2', 'tick 3', 'tick 4']);
    assert.deepEqual(status.metadata.get('x-server-trailer'), ['bye']);
  });

  it('streams the messages of a client-streaming call up', async () => {
    const answer = await new Promise<EchoMessage>((resolve, reject) => {
      const call = client.clientStream(new grpc.Metadata(), {}, (err, value) => (err ? reject(err) : resolve(value!)));
      for (const text of ['a', 'b', 'c']) call.write({ text });
      call.end();
    });
    assert.deepEqual(answer, { text: 'a,b,c', count: 3 });
  });

  it("streams a client's messages past the body limit, which holds bodies read whole, not streams", async () => {
    const part = 'x'.repeat(256 * 1024);
    const answer = await new Promise<EchoMessage>((resolve, reject) => {
      const call = client.clientStream(new grpc.Metadata(), {}, (err, value) => (err ? reject(err) : resolve(value!)));
      // 3 MiB in all, three times the default limit.
      for (let i = 0; i < 12; i++) call.write({ text: part });
      call.end();
    });
    assert.equal(answer.count, 12);
    assert.equal(answer.text?.length, 12 * part.length + 11);
  });

  it('passes a bidirectional call message by message: each answer comes before the next message is sent', async () => {
    const call = client.bidi(new grpc.Metadata());
    const answers: string[] = [];
    for (const text of ['one', 'two', 'three']) {
      call.write({ text });
      answers.push(await new Promise<string>((resolve) => call.once('data', (m: EchoMessage) => resolve(m.text!))));
    }
    call.end();
    const status = await new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    assert.deepEqual(answers, ['echo one', 'echo two', 'echo three']);
    assert.equal(status.code, grpc.status.OK);
  });

  it('carries many calls at once on one connection', async () => {
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => unary(client, { text: `n${i}` })));
    assert.deepEqual(
      outcomes.map((o) => o.answer?.text),
      outcomes.map((_, i) => `n${i}`),
    );
  });
});
