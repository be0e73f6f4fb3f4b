import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { createGateway, type Gateway } from '../../src/gateway';
import { close, listen } from '../support/server';
import { configOf, mapping } from '../support/records';
import { echoModule, registry } from '../support/modules';
import { recordingUpstream } from '../support/upstreams';
import { send } from '../support/client';
import { nodeRefusesFieldsPastCount } from '../support/node-http';

/** Writes `request` as it is and reads the whole answer; the client does not end its side first. */
function exchange(port: number, request: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let answer = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

function bodyOf(answer: string): unknown {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
}

const NOT_IMPLEMENTED = {
  code: 501,
  message: '501: Not Implemented',
  detail: 'the request body is in a transfer coding other than chunked, which the gateway does not decode',
};

describe('gateway transfer codings', () => {
  let gateway: Gateway;
  let server: http.Server;
  let port: number;
  let upstream: Awaited<ReturnType<typeof recordingUpstream>>;
  let coded: Awaited<ReturnType<typeof listen>>;
  const local = echoModule('local');
  let localCalls = 0;

  before(async () => {
    upstream = await recordingUpstream((_req, res, received) => res.end(`got ${received.body.length}`));
    // An upstream that answers in gzip as a transfer coding, then chunked.
    const zipped = gzipSync('hello');
    const raw = net.createServer((socket) =>
      socket.once('data', () => {
        socket.write(`HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n${zipped.length.toString(16)}\r\n`);
        socket.end(Buffer.concat([zipped, Buffer.from('\r\n0\r\n\r\n')]));
      }),
    );
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    coded = {
      server: raw as unknown as http.Server,
      url: `http://127.0.0.1:${(raw.address() as net.AddressInfo).port}`,
      port: 0,
    };
    local.app.middleware.unshift(async (_ctx, next) => {
      localCalls++;
      await next();
    });
    gateway = createGateway({
      modules: registry(local),
      config: configOf(mapping('/remote/', upstream.url), mapping('/local/', 'local'), mapping('/coded/', coded.url)),
    });
    ({ server, port } = await listen(gateway.app.callback()));
  });

  after(async () => {
    await close(server);
    await gateway.close();
    await close(upstream.server);
    await new Promise((resolve) => coded.server.close(resolve));
  });

  it('answers 501 to a body in a transfer coding before chunked, and the upstream gets nothing', async () => {
    const zipped = gzipSync('{"a":1}');
    const answer = await exchange(
      port,
      Buffer.concat([
        Buffer.from(
          `POST /remote/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n${zipped.length.toString(16)}\r\n`,
        ),
        zipped,
        Buffer.from('\r\n0\r\n\r\n'),
      ]),
    );
    assert.match(answer, /^HTTP\/1\.1 501 Not Implemented\r\n/);
    assert.deepEqual(bodyOf(answer), NOT_IMPLEMENTED);
    assert.equal(upstream.received.length, 0);
  });

  it('answers 501 to such a body on the route of an in-process module, which never sees it', async () => {
    const answer = await exchange(
      port,
      'POST /local/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: deflate , chunked\r\nConnection: close\r\n\r\n1\r\na\r\n0\r\n\r\n',
    );
    assert.match(answer, /^HTTP\/1\.1 501 Not Implemented\r\n/);
    assert.equal(localCalls, 0);
  });

  it('answers 400 to an HTTP/1.0 request with a Transfer-Encoding, and serves nothing after it on that connection', async () => {
    // HTTP/1.0 has no chunked coding: a proxy in front may have read no body there, and the chunks as the next request.
    const answer = await exchange(
      port,
      'POST /remote/x HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n' +
        'GET /remote/smuggled HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assert.deepEqual(bodyOf(answer), {
      code: 400,
      message: '400: Bad Request',
      detail: 'an HTTP/1.0 request may not have a Transfer-Encoding',
    });
    assert.equal(answer.match(/HTTP\/1\.1 /g)?.length, 1, answer);
    assert.equal(upstream.received.length, 0);
  });

  it('never serves a request whose framing lies past the header fields Node keeps: 431, the connection closed', async () => {
    // 1001 fields, one past the count of a server left at Node's default: Node 20 hands the app the
    // first 1000 (the framing dropped, still framing the body), which the gateway refuses with its
    // error body; Node 22 and 24 refuse the request in the parser, with a bare 431 of their own.
    const nodeRefuses = await nodeRefusesFieldsPastCount();
    const fillers = Array.from({ length: 999 }, (_, i) => `a${i}: b\r\n`).join('');
    for (const framing of [
      'Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
      'Content-Length: 5\r\n\r\nhello',
    ]) {
      const answer = await exchange(
        port,
        `POST /remote/x HTTP/1.1\r\nHost: x\r\n${fillers}${framing}GET /remote/next HTTP/1.1\r\nHost: x\r\n\r\n`,
      );
      assert.match(answer, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
      assert.match(answer, /\r\nConnection: close\r\n/i);
      if (nodeRefuses) assert.ok(answer.endsWith('\r\n\r\n'), answer);
      else
        assert.deepEqual(bodyOf(answer), {
          code: 431,
          message: '431: Request Header Fields Too Large',
          detail: 'a request may carry at most 100 header fields',
        });
      assert.equal(answer.match(/HTTP\/1\.1 /g)?.length, 1, answer);
    }
    assert.equal(upstream.received.length, 0);
    // Host, Connection, Content-Length and the fillers: 100 fields are served, 101 are not.
    const fields = (count: number) => Array.from({ length: count - 3 }, (_, i) => `a${i}: b\r\n`).join('');
    const hundred = await exchange(
      port,
      `POST /remote/x HTTP/1.1\r\nHost: x\r\n${fields(100)}Connection: close\r\nContent-Length: 3\r\n\r\nabc`,
    );
    assert.match(hundred, /^HTTP\/1\.1 200 OK\r\n/);
    assert.ok(hundred.endsWith('got 3'), hundred);
    const more = await exchange(
      port,
      `POST /remote/x HTTP/1.1\r\nHost: x\r\n${fields(101)}Connection: close\r\nContent-Length: 3\r\n\r\nabc`,
    );
    assert.match(more, /^HTTP\/1\.1 431 /);
    assert.equal(upstream.received.length, 1);
  });

  it('still takes a chunked body, whatever the case of the word', async () => {
    const answer = await exchange(
      port,
      'POST /remote/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
    );
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.ok(answer.endsWith('got 3'), answer);
  });

  it('answers 502 when the upstream answers in a transfer coding other than chunked, rather than pass on coded bytes as the body', async () => {
    const res = await send(`http://127.0.0.1:${port}`, '/coded/x');
    assert.equal(res.status, 502);
    assert.deepEqual(res.json(), {
      code: 502,
      message: '502: Bad Gateway',
      detail: 'the upstream service answered in a transfer coding other than chunked',
    });
  });
});
