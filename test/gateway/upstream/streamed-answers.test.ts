/**
 * @module test/gateway/upstream/streamed-answers
 * Answers that stream from a remote upstream: their headers reach the client
 * as soon as they come, and an answer the upstream cuts short after them is
 * the upstream's failure, counted as one, not the client's.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { mapping } from '../../support/records';
import { testGateway, type TestGateway } from '../../support/reporting-gateway';

/**
 * An upstream of raw bytes, on 127.0.0.1 and 127.0.0.2 at one port (two
 * endpoints): it sends each request's answer head, then waits for the test
 * to say how the body goes.
 */
async function scriptedUpstream(head: string) {
  const sockets: net.Socket[] = [];
  const waiting: ((socket: net.Socket) => void)[] = [];
  const serve = (socket: net.Socket) => {
    socket.once('data', () => {
      socket.write(head);
      const next = waiting.shift();
      if (next) next(socket);
      else sockets.push(socket);
    });
  };
  const first = net.createServer(serve).listen(0, '127.0.0.1');
  await once(first, 'listening');
  const port = (first.address() as net.AddressInfo).port;
  const second = net.createServer(serve).listen(port, '127.0.0.2');
  await once(second, 'listening');
  return {
    address: `127.0.0.1:${port}`,
    endpoints: [`127.0.0.1:${port}`, `127.0.0.2:${port}`],
    /** The connection of the next request whose head was sent. */
    next: () =>
      new Promise<net.Socket>((resolve) => (sockets.length > 0 ? resolve(sockets.shift()!) : waiting.push(resolve))),
    close: () =>
      Promise.all([first, second].map((server) => new Promise<void>((resolve) => server.close(() => resolve())))),
  };
}

/** Sends GET `path` and resolves with the response as soon as its head comes. */
function head(base: string, path: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => http.get(`${base}${path}`, { agent: false }, resolve).on('error', reject));
}

describe('answers streamed from a remote upstream', () => {
  let events: Awaited<ReturnType<typeof scriptedUpstream>>;
  let cut: Awaited<ReturnType<typeof scriptedUpstream>>;
  let rig: TestGateway;

  before(async () => {
    events = await scriptedUpstream(
      'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    cut = await scriptedUpstream('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n');
    rig = await testGateway([
      mapping('/events/', `http://${events.address}`, { name: 'events', rewrite: '/' }),
      mapping('/cut/', `http://${cut.address}`, { name: 'cut', rewrite: '/', endpoints: cut.endpoints }),
    ]);
  });
  after(async () => {
    await rig.close();
    await events.close();
    await cut.close();
  });

  it('passes the headers on as they come, before the first byte of the body, which follows when it comes', async () => {
    const answered = head(rig.base, '/events/feed');
    const upstream = await events.next();
    // The upstream sends no body until the client has the headers: held back, they would never come.
    const res = await answered;
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/event-stream');
    upstream.end('d\r\ndata: hello\n\n\r\n0\r\n\r\n');
    let body = '';
    for await (const chunk of res) body += chunk;
    assert.equal(body, 'data: hello\n\n');
  });

  it('cuts the client off when the upstream cuts its answer short, and counts it as the upstream failing', async () => {
    for (let i = 0; i < 10; i++) {
      const answered = head(rig.base, '/cut/x');
      const upstream = await cut.next();
      const res = await answered;
      assert.equal(res.statusCode, 200);
      upstream.write('short');
      upstream.destroy();
      let body = '';
      const ended = await new Promise<string>((resolve) => {
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve('end'));
        res.on('aborted', () => resolve('aborted'));
        res.on('error', () => resolve('error'));
      });
      assert.notEqual(ended, 'end', 'a truncated answer is not ended as a whole one');
      assert.ok(body.length < 100);
    }
    assert.deepEqual(
      rig.reported.errors,
      Array.from({ length: 10 }, () => 'cut other'),
    );
    // Each endpoint failed five times in a row: one is ejected, as many as two endpoints allow.
    assert.equal(rig.reported.ejections.length, 1, rig.reported.ejections.join());
  });
});
