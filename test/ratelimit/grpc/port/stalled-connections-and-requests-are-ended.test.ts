/**
 * @module test/ratelimit/grpc/port/stalled-connections-and-requests-are-ended
 * The gRPC port ends what a client leaves half-done: a connection that never
 * sends its preface, one past the cap, a request that stops short of its
 * end, and more incomplete requests than the server holds.
 */
import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { once } from 'node:events';
import {
  createRateLimitGrpcServer,
  createRateLimitService,
  ENVOY_V3_SERVICE,
  type RateLimitGrpcServer,
  type RateLimitGrpcServerOptions,
} from '../../../../src/ratelimit';
import { handshakeBytesMissing } from '../../../../src/ratelimit/grpc/port/connections';
import { methodOf } from '../../../../src/ratelimit/grpc/protos';
import { grpcClients, unary, type Clients } from '../../../support/grpc-clients';
import { memoryLogger } from '../../../support/memory-logger';
import { NO_BOUND_MS } from '../../../support/polling';

const LIMITS = [{ domain: 'd', descriptors: [{ key: 'k', rate_limit: { unit: 'day', requests_per_unit: 5 } }] }];
const request = (value: string) => ({ domain: 'd', descriptors: [{ entries: [{ key: 'k', value }] }] });
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const SHOULD_RATE_LIMIT = methodOf(ENVOY_V3_SERVICE, 'ShouldRateLimit').path;

/** A socket that resolves once the server has closed it. */
function closedByServer(socket: net.Socket): Promise<void> {
  // A reset is a close too (events.once would reject on its 'error').
  socket.on('error', () => {});
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

async function connect(port: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  return socket;
}

/**
 * Opens a ShouldRateLimit stream that sends its headers, then `body` (if
 * any), and never ends; resolves the response headers the server sends and
 * whether the server closed the stream without the client ending it.
 */
function stalledCall(session: http2.ClientHttp2Session, body?: Buffer) {
  const stream = session.request(
    { ':method': 'POST', ':path': SHOULD_RATE_LIMIT, 'content-type': 'application/grpc', te: 'trailers' },
    { endStream: false },
  );
  if (body) stream.write(body);
  stream.on('error', () => {});
  const headers = once(stream, 'response').then(
    ([h]) => h as http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader,
  );
  stream.resume();
  const closed = once(stream, 'close').then(() => stream.rstCode);
  return { stream, headers, closed };
}

describe('connections and streams that stall on the gRPC port are ended', function () {
  // Every bound here is a fraction of a second: a test that waits longer has found a stall.
  this.timeout(15_000);
  let server: RateLimitGrpcServer | undefined;
  let clients: Clients | undefined;
  let sessions: http2.ClientHttp2Session[] = [];
  let sockets: net.Socket[] = [];

  async function serve(options: RateLimitGrpcServerOptions): Promise<number> {
    const service = createRateLimitService({ limits: LIMITS, logger: memoryLogger() });
    server = createRateLimitGrpcServer(service, { port: 0, ...options });
    const port = await server.start();
    clients = grpcClients(`127.0.0.1:${port}`);
    return port;
  }
  function h2(port: number): http2.ClientHttp2Session {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    sessions.push(session);
    return session;
  }
  async function raw(port: number): Promise<net.Socket> {
    const socket = await connect(port);
    sockets.push(socket);
    return socket;
  }

  afterEach(async () => {
    for (const s of sessions) s.destroy();
    for (const s of sockets) s.destroy();
    sessions = [];
    sockets = [];
    clients?.close();
    clients = undefined;
    await server?.stop();
    server = undefined;
  });

  it('closes a connection that sends no preface, or part of one, within handshakeTimeoutMs', async () => {
    const port = await serve({ handshakeTimeoutMs: 150 });
    // Before connecting: the server's bound counts from when it accepts, which a loaded machine may delay.
    const started = Date.now();
    const silent = await raw(port);
    const partial = await raw(port);
    partial.write(PREFACE.subarray(0, 10));
    await Promise.all([closedByServer(silent), closedByServer(partial)]);
    assert.ok(Date.now() - started >= 100, 'not before the bound');
    // A client that does send its preface is served.
    assert.equal((await unary(clients!.envoy, 'ShouldRateLimit', request('after'))).overall_code, 'OK');
  });

  it('closes connections past maxConnections as they come, and takes new ones once others end', async () => {
    const port = await serve({ maxConnections: 2, handshakeTimeoutMs: 60_000 });
    const held = [await raw(port), await raw(port)];
    const over = net.connect(port, '127.0.0.1');
    await closedByServer(over);
    assert.equal(over.bytesRead, 0);
    for (const s of held) s.destroy();
    await Promise.all(held.map((s) => once(s, 'close')));
    // Should the server not have seen them close yet, the client is closed
    // too and, waiting for ready, connects again: the call is answered.
    const res = await new Promise<{ overall_code: string }>((resolve, reject) =>
      clients!.envoy.ShouldRateLimit(
        request('free'),
        { deadline: Date.now() + NO_BOUND_MS, waitForReady: true },
        (err: Error | null, r: { overall_code: string }) => (err ? reject(err) : resolve(r)),
      ),
    );
    assert.equal(res.overall_code, 'OK');
  });

  it('answers DEADLINE_EXCEEDED and resets a stream that sent headers and no message, counting nothing', async () => {
    const port = await serve({ requestTimeoutMs: 150 });
    const call = stalledCall(h2(port));
    const headers = await call.headers;
    assert.equal(headers['grpc-status'], '4');
    assert.match(decodeURIComponent(String(headers['grpc-message'])), /the request did not arrive within 150 ms/);
    assert.equal(await call.closed, http2.constants.NGHTTP2_NO_ERROR, 'reset by the server: the client never ended it');
  });

  it('resets a stream that sent all but the last byte of its message, and counts nothing for it', async () => {
    const port = await serve({ requestTimeoutMs: 150 });
    const message = methodOf(ENVOY_V3_SERVICE, 'ShouldRateLimit').requestSerialize(request('partial'));
    const framed = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), message]);
    framed.writeUInt32BE(message.length, 1);
    const call = stalledCall(h2(port), framed.subarray(0, framed.length - 1));
    assert.equal((await call.headers)['grpc-status'], '4');
    await call.closed;
    const res = await unary(clients!.envoy, 'ShouldRateLimit', request('partial'));
    assert.equal(res.statuses[0].limit_remaining, 4, 'the stalled call counted nothing');
  });

  it('ends the oldest incomplete request with RESOURCE_EXHAUSTED past maxIncompleteRequests', async () => {
    const port = await serve({ maxIncompleteRequests: 3, requestTimeoutMs: 60_000 });
    const session = h2(port);
    // One session: the server sees its streams in the order they are opened.
    const [first, second, third, fourth] = [
      stalledCall(session),
      stalledCall(session),
      stalledCall(session),
      stalledCall(session),
    ];
    const headers = await first.headers;
    assert.equal(headers['grpc-status'], '8');
    assert.match(
      decodeURIComponent(String(headers['grpc-message'])),
      /at most 3 incomplete requests, and this one waited longest/,
    );
    assert.equal(await first.closed, http2.constants.NGHTTP2_NO_ERROR);
    // A complete call waits microseconds: it makes room (the second goes) and is answered.
    assert.equal((await unary(clients!.envoy, 'ShouldRateLimit', request('busy'))).overall_code, 'OK');
    assert.equal((await second.headers)['grpc-status'], '8');
    for (const c of [third, fourth]) assert.equal(c.stream.closed, false);
  });

  it('closes a connection idle for idleTimeoutMs with a GOAWAY, and keeps one with a call open', async () => {
    const port = await serve({ idleTimeoutMs: 150, requestTimeoutMs: 60_000 });
    const idle = h2(port);
    const busy = h2(port);
    const call = stalledCall(busy);
    await once(idle, 'goaway');
    await once(idle, 'close');
    assert.equal(busy.closed, false);
    assert.equal(call.stream.closed, false);
  });

  it('leaves well-behaved clients alone: calls paced past every bound, a Watch stream, pings', async () => {
    await serve({ requestTimeoutMs: 100, handshakeTimeoutMs: 100, idleTimeoutMs: 10_000, keepaliveTimeMs: 50 });
    const watch = clients!.health.Watch({ service: '' });
    const seen: string[] = [];
    watch.on('data', (m: { status: string }) => seen.push(m.status));
    const ended = new Promise<unknown>((resolve) => watch.on('error', resolve));
    for (let i = 0; i < 3; i++) {
      const res = await unary(clients!.envoy, 'ShouldRateLimit', request('paced'));
      assert.equal(res.statuses[0].limit_remaining, 4 - i, 'exact counts');
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.deepEqual(seen, ['SERVING'], 'the Watch stream, its request complete, stays open');
    watch.cancel();
    assert.match(String(((await ended) as Error).message), /CANCELLED/);
  });

  it('closes connections still in their handshake on stop', async () => {
    const port = await serve({ handshakeTimeoutMs: 60_000 });
    const waiting = await raw(port);
    await server!.stop();
    server = undefined;
    await closedByServer(waiting);
  });

  it('refuses bounds that are not whole numbers of at least 1', () => {
    const service = createRateLimitService({ limits: LIMITS });
    for (const name of [
      'maxConnections',
      'handshakeTimeoutMs',
      'requestTimeoutMs',
      'maxIncompleteRequests',
      'idleTimeoutMs',
      'keepaliveTimeMs',
    ]) {
      assert.throws(
        () => createRateLimitGrpcServer(service, { [name]: 0 }),
        new RegExp(`${name} must be a whole number of 1 or more, got 0`),
      );
    }
  });
});

describe('reading a connection preface', () => {
  const settings = (length: number, type = 4) =>
    Buffer.concat([Buffer.from([0, 0, length, type, 0, 0, 0, 0, 0]), Buffer.alloc(length)]);

  it('waits for the preface and a whole first SETTINGS frame', () => {
    assert.equal(handshakeBytesMissing(Buffer.alloc(0)), 33);
    assert.equal(handshakeBytesMissing(PREFACE.subarray(0, 10)), 23);
    assert.equal(handshakeBytesMissing(PREFACE), 9);
    assert.equal(handshakeBytesMissing(Buffer.concat([PREFACE, settings(12).subarray(0, 15)])), 6);
    assert.equal(handshakeBytesMissing(Buffer.concat([PREFACE, settings(12)])), 0);
    assert.equal(handshakeBytesMissing(Buffer.concat([PREFACE, settings(0)])), 0);
  });

  it('hands over at once what cannot be a preface, for HTTP/2 to refuse', () => {
    assert.equal(handshakeBytesMissing(Buffer.from('GET / HTTP/1.1\r\n')), 0);
    assert.equal(
      handshakeBytesMissing(Buffer.concat([PREFACE, settings(6, 8)])),
      0,
      'a first frame that is no SETTINGS',
    );
    assert.equal(
      handshakeBytesMissing(Buffer.concat([PREFACE, Buffer.from([0xff, 0xff, 0xff, 4, 0, 0, 0, 0, 0])])),
      0,
      'too long to buffer',
    );
  });
});
