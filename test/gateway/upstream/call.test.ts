import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { close, listen } from '../../support/server';
import { mapping } from '../../support/records';
import { send } from '../../support/client';
import { testGateway, type TestGateway } from '../../support/reporting-gateway';

/** Sends `request` as it is written and reads the whole reply, as bytes on the wire. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

/** 200 KiB: past what is read whole (64 KiB), so streamed. */
const LONG = Buffer.alloc(200 * 1024, 'abcdefghij');

/** 32 MiB: more than the sockets between a paused client and the upstream hold, so the gateway pauses the upstream. */
const HUGE = Buffer.alloc(32 * 1024 * 1024, 'klmnopqrst');

/** Reads an answer through the gateway, keeping `pauseMs` between its headers and its body; says what came and whether it came whole. */
function readAnswer(
  base: string,
  path: string,
  pauseMs = 0,
): Promise<{ status: number; bytes: number; whole: boolean }> {
  const url = new URL(base);
  return new Promise((resolve) => {
    let status = 0;
    let bytes = 0;
    const req = http.get({ host: url.hostname, port: url.port, path, agent: false }, (res) => {
      status = res.statusCode!;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('error', () => resolve({ status, bytes, whole: false }));
      res.on('end', () => resolve({ status, bytes, whole: res.complete }));
      if (pauseMs > 0) {
        res.pause();
        setTimeout(() => res.resume(), pauseMs);
      }
    });
    req.on('error', () => resolve({ status, bytes, whole: false }));
  });
}

describe('an upstream answer on its way back', () => {
  let upstream: http.Server;
  let raw: net.Server;
  let rig: TestGateway;
  /** Per path: how many times it was asked. */
  const asked = new Map<string, number>();
  /** Resolves when the upstream's answer on /cut/ was closed before its end. */
  let cutClosed: Promise<void>;
  let markCutClosed: () => void;
  /** Resolves when the client has read the first part of /trickle/. */
  let firstPartRead: Promise<void>;
  let markFirstPartRead: () => void;
  /** The same for /stall/. */
  let stallClosed: Promise<void>;
  let markStallClosed: () => void;

  before(async () => {
    const up = await listen((req, res) => {
      const path = req.url!;
      const n = (asked.get(path) ?? 0) + 1;
      asked.set(path, n);
      if (path.startsWith('/retry-long/')) {
        // A long 503 first, read and dropped by the retry; then the answer.
        if (n === 1) res.writeHead(503, { 'content-length': LONG.length }).end(LONG);
        else res.writeHead(200, { 'content-type': 'text/plain' }).end(`try ${n}`);
      } else if (path.startsWith('/long/')) {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': LONG.length }).end(LONG);
      } else if (path.startsWith('/unsized/')) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first,');
        setImmediate(() => res.end('second'));
      } else if (path.startsWith('/cut/')) {
        res.on('close', () => markCutClosed());
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        // A first part, then nothing until the client is gone.
        res.write(LONG);
      } else if (path.startsWith('/stall/')) {
        res.on('close', () => markStallClosed());
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        // A first part, then silence.
        res.write(LONG);
      } else if (path.startsWith('/drip/')) {
        // Eight parts, 200 ms apart: longer in all than idle_timeout_ms, never silent that long.
        res.writeHead(200, { 'content-type': 'text/plain' });
        let sent = 0;
        const drip = setInterval(() => {
          if (++sent < 8) res.write(`part ${sent},`);
          else {
            clearInterval(drip);
            res.end('last');
          }
        }, 200);
      } else if (path.startsWith('/trickle/')) {
        // A short answer whose length is said, its first part at once, the rest only once the client has the first.
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 11 });
        res.write('first,');
        void firstPartRead.then(() => res.end('last.'));
      } else if (path.startsWith('/huge/')) {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': HUGE.length }).end(HUGE);
      } else {
        res.writeHead(200, { 'content-length': 2 }).end('ok');
      }
    });
    upstream = up.server;
    // Informational answers before the final one, as a server sending Early Hints does.
    raw = net.createServer((socket) => {
      socket.once('data', (head: Buffer) => {
        // Headers, then a chunk size that is no number, in one packet: the answer fails as it begins.
        if (head.toString('latin1').startsWith('GET /repeated')) {
          socket.end(
            'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Type: text/html\r\nX-Tag: a\r\nX-Tag: b\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok',
          );
          return;
        }
        if (head.toString('latin1').startsWith('GET /continue')) {
          socket.end(
            'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok',
          );
          return;
        }
        if (head.toString('latin1').startsWith('GET /broken')) {
          socket.end(
            'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nno\r\n0\r\n\r\n',
          );
          return;
        }
        socket.end(
          'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n' +
            'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nConnection: close\r\n\r\nfinal',
        );
      });
    });
    raw.listen(0, '127.0.0.1');
    await once(raw, 'listening');
    const rawPort = (raw.address() as net.AddressInfo).port;
    const address = `127.0.0.1:${up.port}`;
    rig = await testGateway([
      mapping('/retry-long/', `http://${address}`, {
        name: 'retry-long',
        rewrite: '',
        retry_policy: { retry_on: '5xx' },
      }),
      mapping('/long/', `http://${address}`, { name: 'long', rewrite: '' }),
      mapping('/unsized/', `http://${address}`, { name: 'unsized', rewrite: '' }),
      mapping('/cut/', `http://${address}`, { name: 'cut', rewrite: '' }),
      mapping('/stall/', `http://${address}`, { name: 'stall', rewrite: '', idle_timeout_ms: 200 }),
      mapping('/drip/', `http://${address}`, { name: 'drip', rewrite: '', idle_timeout_ms: 1000 }),
      // Long enough that its headers come within it on a loaded machine; the test pauses six times as long.
      mapping('/huge/', `http://${address}`, { name: 'huge', rewrite: '', idle_timeout_ms: 500 }),
      mapping('/trickle/', `http://${address}`, { name: 'trickle', rewrite: '' }),
      mapping('/hints/', `http://127.0.0.1:${rawPort}`, { name: 'hints' }),
      mapping('/broken/', `http://127.0.0.1:${rawPort}`, { name: 'broken', rewrite: '' }),
      mapping('/repeated/', `http://127.0.0.1:${rawPort}`, { name: 'repeated', rewrite: '' }),
      mapping('/continue/', `http://127.0.0.1:${rawPort}`, { name: 'continue', rewrite: '' }),
    ]);
  });

  beforeEach(() => {
    asked.clear();
    cutClosed = new Promise((resolve) => (markCutClosed = resolve));
    stallClosed = new Promise((resolve) => (markStallClosed = resolve));
    firstPartRead = new Promise((resolve) => (markFirstPartRead = resolve));
  });

  after(async () => {
    await rig.close();
    await close(upstream);
    raw.close();
  });

  it('streams an answer longer than it reads whole, every byte in order, with its length', async () => {
    const res = await send(rig.base, '/long/a');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-length'], String(LONG.length));
    assert.equal(res.headers['content-type'], 'application/octet-stream');
    assert.ok(Buffer.from(res.text, 'utf8').equals(LONG));
  });

  it('streams an answer of unknown length to its end', async () => {
    const res = await send(rig.base, '/unsized/a');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'first,second');
  });

  it('reads and drops a long answer it tries again, and answers with the next try', async () => {
    const res = await send(rig.base, '/retry-long/a');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'try 2');
    assert.equal(asked.get('/retry-long/a'), 2);
    assert.deepEqual(rig.reported.retries, ['retry-long']);
  });

  it("waits past the upstream's informational answers and passes the final one on", async () => {
    const res = await send(rig.base, '/hints/');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'final');
    assert.equal(res.headers.link, undefined);
  });

  it('answers 502 with the error body to an unasked-for 100 Continue, which its HTTP client takes for a broken answer, and goes on serving', async () => {
    const res = await send(rig.base, '/continue/a');
    assert.equal(res.status, 502);
    assert.deepEqual(res.json(), {
      code: 502,
      message: '502: Bad Gateway',
      detail: 'the upstream service failed to answer',
    });
    assert.equal((await send(rig.base, '/long/a')).status, 200);
  });

  it('passes on the headers an upstream repeats as it sent them, a repeated Content-Type included', async () => {
    const reply = await rawExchange(
      Number(new URL(rig.base).port),
      'GET /repeated/a HTTP/1.1\r\nHost: gateway.test\r\nConnection: close\r\n\r\n',
    );
    const head = reply.slice(0, reply.indexOf('\r\n\r\n'));
    assert.match(head, /^HTTP\/1\.1 200 /);
    assert.equal(reply.slice(head.length + 4), 'ok');
    assert.deepEqual(head.match(/^content-type: .*$/gim), ['Content-Type: text/plain', 'Content-Type: text/html']);
    assert.deepEqual(head.match(/^x-tag: .*$/gim), ['X-Tag: a', 'X-Tag: b']);
  });

  it('cuts the connection, as Envoy resets the stream, when an answer fails right after its headers, and goes on serving', async () => {
    const url = new URL(rig.base);
    const outcome = await new Promise<string>((resolve) => {
      const req = http.get({ host: url.hostname, port: url.port, path: '/broken/a', agent: false }, (res) => {
        res.on('error', () => resolve('cut'));
        res.on('end', () => resolve(res.complete ? `whole ${res.statusCode}` : 'cut'));
        res.resume();
      });
      req.on('error', () => resolve('cut'));
    });
    // No part of a broken body passes for a whole answer.
    assert.equal(outcome, 'cut');
    assert.equal((await send(rig.base, '/long/a')).status, 200);
  });

  it('passes on the first part of a short answer as it comes, not once the whole of it has', async () => {
    const url = new URL(rig.base);
    const req = http.get({ host: url.hostname, port: url.port, path: '/trickle/a', agent: false });
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-length'], '11');
    res.setEncoding('utf8');
    const [first] = (await once(res, 'data')) as [string];
    // The upstream sends the rest only now: an answer held until whole would never have come.
    assert.equal(first, 'first,');
    markFirstPartRead();
    let rest = '';
    res.on('data', (chunk: string) => (rest += chunk));
    await once(res, 'end');
    assert.equal(first + rest, 'first,last.');
  });

  it('ends the upstream request when the client leaves halfway through a streamed answer', async () => {
    const url = new URL(rig.base);
    const req = http.get({ host: url.hostname, port: url.port, path: '/cut/a', agent: false });
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    assert.equal(res.statusCode, 200);
    // The first bytes came through; the client goes before the rest.
    await once(res, 'data');
    req.destroy();
    await cutClosed;
  });

  it('cuts a streamed answer whose body is silent for idle_timeout_ms, as Envoy resets the stream, and ends the upstream request', async () => {
    const answer = await readAnswer(rig.base, '/stall/a');
    assert.equal(answer.status, 200);
    assert.ok(answer.bytes >= LONG.length, `the part before the silence came through: ${answer.bytes} bytes`);
    assert.equal(answer.whole, false);
    await stallClosed;
  });

  it('passes on a body that keeps coming, however long it takes in all, when no silence in it is as long as idle_timeout_ms', async () => {
    const answer = await readAnswer(rig.base, '/drip/a');
    assert.deepEqual(answer, {
      status: 200,
      bytes: 'part 1,part 2,part 3,part 4,part 5,part 6,part 7,last'.length,
      whole: true,
    });
  });

  it('does not count against idle_timeout_ms the time a slow client keeps the answer waiting', async () => {
    // Six times idle_timeout_ms without reading: the upstream is paused, not silent.
    const answer = await readAnswer(rig.base, '/huge/a', 3000);
    assert.deepEqual(answer, { status: 200, bytes: HUGE.length, whole: true });
  });
});
