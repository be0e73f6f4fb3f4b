import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { listen, type Rejected, type RunningServer } from '../../../src/gatehouse';

/**
 * Sends raw bytes and reads the whole answer. With `keepWriting`, the client
 * does not end its side, as a client that still waits for answers does not:
 * the server closes the connection.
 */
async function raw(port: number, request: string, keepWriting = false): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  if (keepWriting) socket.write(request);
  else socket.end(request);
  let answer = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
  await once(socket, 'close');
  return answer;
}

function bodyOf(answer: string): unknown {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
}

/** What was told of the requests answered outside the app, less the request ids (each checked where it matters). */
function told(rejected: readonly Rejected[]): Omit<Rejected, 'requestId'>[] {
  return rejected.map(({ requestId: _id, ...rest }) => rest);
}

/** The value of `name` in a raw answer's head. */
function headerOf(answer: string, name: string): string | undefined {
  const head = answer.slice(0, answer.indexOf('\r\n\r\n'));
  return new RegExp(`\r\n${name}: ([^\r]*)`, 'i').exec(head)?.[1];
}

describe('gatehouse/serving/http-server', () => {
  let server: RunningServer;

  const rejected: Rejected[] = [];

  before(async () => {
    server = await listen((_req, res) => res.end('ok'), {
      host: '127.0.0.1',
      port: 0,
      onRejected: (r) => rejected.push(r),
    });
  });

  beforeEach(() => {
    rejected.length = 0;
  });

  after(() => server.close(0));

  it('answers headers larger than Node allows with 431 and the error body', async () => {
    const answer = await raw(server.port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    assert.match(answer, /\r\nContent-Type: application\/json; charset=utf-8\r\n/i);
    assert.deepEqual(bodyOf(answer), { code: 431, message: '431: Request Header Fields Too Large' });
  });

  it('answers 431 with its detail to a request of more than 100 header fields and closes, on every Node', async () => {
    const fillers = Array.from({ length: 150 }, (_, i) => `a${i}: b\r\n`).join('');
    const answer = await raw(
      server.port,
      `POST /v1/x HTTP/1.1\r\nHost: x\r\n${fillers}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
      true,
    );
    assert.match(answer, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assert.deepEqual(bodyOf(answer), {
      code: 431,
      message: '431: Request Header Fields Too Large',
      detail: 'a request may carry at most 100 header fields',
    });
    assert.deepEqual(told(rejected), [
      { status: 431, method: 'POST', target: '/v1/x', remote: '127.0.0.1', protocol: 'HTTP/1.1' },
    ]);
  });

  it('answers a malformed request line with 400 and the error body', async () => {
    const answer = await raw(server.port, 'NOT A REQUEST\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.deepEqual(bodyOf(answer), { code: 400, message: '400: Bad Request' });
  });

  it('answers an HTTP/1.1 request without Host with 400 and the error body, and tells of it', async () => {
    const answer = await raw(server.port, 'GET /v1/x?token=secret HTTP/1.1\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assert.deepEqual(bodyOf(answer), {
      code: 400,
      message: '400: Bad Request',
      detail: 'an HTTP/1.1 request must have a Host header',
    });
    assert.deepEqual(told(rejected), [
      { status: 400, method: 'GET', target: '/v1/x', remote: '127.0.0.1', protocol: 'HTTP/1.1' },
    ]);
  });

  it('serves an HTTP/1.0 request without Host, which needs none', async () => {
    const answer = await raw(server.port, 'GET / HTTP/1.0\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.ok(answer.endsWith('\r\n\r\nok'), answer);
    assert.deepEqual(rejected, []);
  });

  it('answers CONNECT with 501 and the error body: it tunnels nothing', async () => {
    const answer = await raw(server.port, 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 501 Not Implemented\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assert.deepEqual(bodyOf(answer), {
      code: 501,
      message: '501: Not Implemented',
      detail: 'CONNECT is not supported: the gateway does not tunnel',
    });
  });

  it('answers a body in a transfer coding Node cannot frame with 501 and the error body, and tells of it', async () => {
    const answer = await raw(
      server.port,
      'POST /v1/x?token=secret HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc',
      true,
    );
    assert.match(answer, /^HTTP\/1\.1 501 Not Implemented\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assert.deepEqual(bodyOf(answer), {
      code: 501,
      message: '501: Not Implemented',
      detail: 'the request body is in a transfer coding other than chunked, which the gateway does not decode',
    });
    assert.deepEqual(told(rejected), [
      { status: 501, method: 'POST', target: '/v1/x', remote: '127.0.0.1', protocol: 'HTTP/1.1' },
    ]);
  });

  it('answers an HTTP/1.0 request with a Transfer-Encoding with 400, and closes the connection', async () => {
    const answer = await raw(
      server.port,
      'POST / HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n',
      true,
    );
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assert.deepEqual(bodyOf(answer), {
      code: 400,
      message: '400: Bad Request',
      detail: 'an HTTP/1.0 request may not have a Transfer-Encoding',
    });
    assert.deepEqual(told(rejected), [
      { status: 400, method: 'POST', target: '/', remote: '127.0.0.1', protocol: 'HTTP/1.0' },
    ]);
  });

  it('answers an Expect other than 100-continue with 417 and the error body, tells of it, and closes the connection', async () => {
    const answer = await raw(
      server.port,
      'GET /v1/x HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nX-Request-Id: trace-417\r\n\r\n',
      true,
    );
    assert.match(answer, /^HTTP\/1\.1 417 Expectation Failed\r\n/);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assert.equal(headerOf(answer, 'X-Request-Id'), 'trace-417');
    assert.deepEqual(bodyOf(answer), {
      code: 417,
      message: '417: Expectation Failed',
      detail: 'the only expectation the gateway meets is 100-continue',
    });
    assert.deepEqual(rejected, [
      {
        status: 417,
        method: 'GET',
        target: '/v1/x',
        remote: '127.0.0.1',
        requestId: 'trace-417',
        protocol: 'HTTP/1.1',
      },
    ]);
  });

  it('answers what it refuses itself in the representation Accept chooses, with the client request id, as the app answers', async () => {
    const refusals = [
      'GET /v1/x HTTP/1.1\r\nAccept: application/xml\r\nX-Request-Id: trace-1\r\n\r\n',
      'POST /v1/x HTTP/1.1\r\nHost: x\r\nAccept: application/xml\r\nX-Request-Id: trace-2\r\nTransfer-Encoding: gzip, chunked\r\n\r\n',
      'CONNECT a:1 HTTP/1.1\r\nHost: a:1\r\nAccept: application/xml\r\nX-Request-Id: trace-3\r\n\r\n',
      'GET /v1/x HTTP/1.1\r\nHost: x\r\nAccept: application/xml\r\nX-Request-Id: trace-4\r\nExpect: foo\r\n\r\n',
    ];
    for (const [i, request] of refusals.entries()) {
      const answer = await raw(server.port, request, true);
      assert.equal(headerOf(answer, 'Content-Type'), 'application/xml', request);
      assert.equal(headerOf(answer, 'Vary'), 'Accept', request);
      assert.equal(headerOf(answer, 'X-Request-Id'), `trace-${i + 1}`, request);
      assert.match(answer, /\r\n\r\n<\?xml version="1\.0" encoding="UTF-8"\?>\n<response><code>\d{3}<\/code>/, request);
    }
    assert.deepEqual(
      rejected.map((r) => r.requestId),
      ['trace-1', 'trace-2', 'trace-3', 'trace-4'],
    );
  });

  it('gives a request it could not read a request id of its own, the one it tells of', async () => {
    const answer = await raw(server.port, 'NOT A REQUEST\r\nX-Request-Id: trace-x\r\n\r\n');
    const id = headerOf(answer, 'X-Request-Id');
    assert.match(id ?? '', /^[0-9a-f-]{36}$/);
    assert.deepEqual(rejected, [{ status: 400, remote: '127.0.0.1', requestId: id }]);
  });

  it('serves well-formed requests as usual', async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'ok');
    assert.deepEqual(rejected, []);
  });

  it('tells of every request it answers itself, for the access log, with no user information of a CONNECT target', async () => {
    await raw(server.port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    await raw(server.port, 'NOT A REQUEST\r\n\r\n');
    await raw(server.port, 'CONNECT user:secret@127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n');
    assert.deepEqual(told(rejected), [
      { status: 431, remote: '127.0.0.1' },
      { status: 400, remote: '127.0.0.1' },
      { status: 501, method: 'CONNECT', target: '127.0.0.1:22', remote: '127.0.0.1', protocol: 'HTTP/1.1' },
    ]);
  });

  it('answers the requests before one that closes the connection, and serves none sent after it', async () => {
    const served: string[] = [];
    const own = await listen(
      (req, res) => {
        served.push(req.url!);
        // Answered later, as a proxied request is: the bytes after the closing request arrive first.
        setTimeout(() => res.end(`answer to ${req.url}`), 50);
      },
      { host: '127.0.0.1', port: 0 },
    );
    try {
      const answer = await raw(
        own.port,
        'GET /1 HTTP/1.1\r\nHost: x\r\n\r\n' +
          'GET /2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' +
          'GET /3 HTTP/1.1\r\nHost: x\r\n\r\n',
        true,
      );
      assert.equal(answer.match(/HTTP\/1\.1 200 OK\r\n/g)?.length, 2, answer);
      assert.ok(answer.includes('answer to /1') && answer.endsWith('answer to /2'), answer);
      assert.match(answer, /\r\nConnection: close\r\n/i);
      assert.deepEqual(served, ['/1', '/2']);
    } finally {
      await own.close(0);
    }
  });

  it('answers an HTTP/1.0 request followed by another, and serves only the first', async () => {
    const served: string[] = [];
    const own = await listen(
      (req, res) => {
        served.push(req.url!);
        setTimeout(() => res.end('ok'), 50);
      },
      { host: '127.0.0.1', port: 0 },
    );
    try {
      const answer = await raw(own.port, 'GET /1 HTTP/1.0\r\n\r\nGET /2 HTTP/1.0\r\n\r\n', true);
      assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
      assert.ok(answer.endsWith('\r\n\r\nok'), answer);
      assert.deepEqual(served, ['/1']);
    } finally {
      await own.close(0);
    }
  });

  it('lets a request in flight finish when closed, and refuses new connections', async () => {
    const inFlight: Array<() => void> = [];
    const own = await listen(
      (req, res) => {
        if (req.url === '/slow') inFlight.push(() => res.end('slow done'));
        else res.end('ok');
      },
      { host: '127.0.0.1', port: 0 },
    );
    const slow = fetch(`http://127.0.0.1:${own.port}/slow`).then((r) => r.text());
    while (inFlight.length === 0) await new Promise((r) => setTimeout(r, 5));
    const closed = own.close(5_000);
    await assert.rejects(fetch(`http://127.0.0.1:${own.port}/`, { headers: { connection: 'close' } }));
    inFlight[0]();
    assert.equal(await slow, 'slow done');
    await closed;
  });

  it('keeps an idle keep-alive connection 65 s, longer than the load balancers in front keep theirs (60 s), and says so', async () => {
    // Node's 5 s would close connections an ALB, nginx or Envoy in front still
    // counts on, and the request it sends on one meanwhile is lost (a 502).
    const byDefault = await fetch(`http://127.0.0.1:${server.port}/`);
    assert.equal(byDefault.headers.get('keep-alive'), 'timeout=65');
    await byDefault.text();
    // Behind a load balancer that keeps its own longer (Google's: 600 s), it is told so.
    const own = await listen((_req, res) => res.end('ok'), { host: '127.0.0.1', port: 0, keepAliveTimeoutMs: 620_000 });
    try {
      const res = await fetch(`http://127.0.0.1:${own.port}/`);
      assert.equal(res.headers.get('keep-alive'), 'timeout=620');
    } finally {
      await own.close(0);
    }
  });

  it('closes at once, when closed, a connection on which no request has begun, as an idle keep-alive one', async () => {
    const own = await listen((_req, res) => res.end('ok'), { host: '127.0.0.1', port: 0 });
    // A browser's preconnect, a load balancer's TCP check: connected, and silent.
    const socket = net.connect(own.port, '127.0.0.1');
    await once(socket, 'connect');
    const closedByServer = once(socket, 'close');
    try {
      // A grace longer than the test: close() ending at all is the connection closed at once.
      await own.close(600_000);
      await closedByServer;
    } finally {
      socket.destroy();
    }
  });

  it('answers a request in flight when closed with Connection: close, so that a keep-alive client sends nothing more on it', async () => {
    const inFlight: Array<() => void> = [];
    const own = await listen(
      (_req, res) => {
        inFlight.push(() => res.end('slow done'));
      },
      { host: '127.0.0.1', port: 0 },
    );
    const answer = raw(own.port, 'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n', true);
    while (inFlight.length === 0) await new Promise((r) => setTimeout(r, 5));
    const closed = own.close(5_000);
    inFlight[0]();
    const text = await answer;
    assert.match(text, /\r\nConnection: close\r\n/i, text);
    assert.doesNotMatch(text, /keep-alive/i, text);
    await closed;
  });

  /** A raw connection that collects what it is sent; `answers()` resolves once `count` whole answers of `ok` came. */
  async function keptConnection(port: number) {
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let text = '';
    const waiting: Array<() => void> = [];
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      text += chunk;
      for (const wake of waiting.splice(0)) wake();
    });
    socket.on('error', (err) => (text += `<${(err as NodeJS.ErrnoException).code}>`));
    const closed = once(socket, 'close').then(() => text);
    return {
      socket,
      closed,
      async answers(count: number): Promise<string> {
        while ((text.match(/\r\n\r\nok/g)?.length ?? 0) < count) await new Promise<void>((wake) => waiting.push(wake));
        return text;
      },
    };
  }

  it('answers a request sent on an idle keep-alive connection just as it closes, with Connection: close', async () => {
    const own = await listen((_req, res) => res.end('ok'), { host: '127.0.0.1', port: 0 });
    const client = await keptConnection(own.port);
    client.socket.write('GET /1 HTTP/1.1\r\nHost: x\r\n\r\n');
    await client.answers(1);
    // Sent, and not read yet, as the server stops listening: Node would close the idle connection under it.
    client.socket.write('GET /2 HTTP/1.1\r\nHost: x\r\n\r\n');
    const closed = own.close(5_000);
    const text = await client.closed;
    assert.equal(text.match(/HTTP\/1\.1 200 OK\r\n/g)?.length, 2, text);
    assert.match(text.slice(text.lastIndexOf('HTTP/1.1')), /\r\nConnection: close\r\n/i);
    assert.doesNotMatch(text, /<E/);
    await closed;
  });

  it('answers a request sent on a connection just accepted, before a byte of it was read', async () => {
    const own = await listen((_req, res) => res.end('ok'), { host: '127.0.0.1', port: 0 });
    const accepted = once(own.server, 'connection');
    const client = await keptConnection(own.port);
    await accepted;
    client.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const closed = own.close(5_000);
    const text = await client.closed;
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(text, /\r\nConnection: close\r\n/i);
    await closed;
  });

  it('drains without closing: every answer from then on closes its connection, and new connections are still taken', async () => {
    const own = await listen((_req, res) => res.end('ok'), { host: '127.0.0.1', port: 0 });
    try {
      const before = await keptConnection(own.port);
      before.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      await before.answers(1);
      own.drain();
      // On the connection open before, and on a new one.
      before.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      const after = await keptConnection(own.port);
      after.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      for (const text of [await before.closed, await after.closed]) {
        assert.match(text.slice(text.lastIndexOf('HTTP/1.1')), /^HTTP\/1\.1 200 OK\r\n[^]*\r\nConnection: close\r\n/i);
      }
    } finally {
      await own.close(0);
    }
  });

  it('answers the last of pipelined requests in flight when closed with Connection: close, and every one of them', async () => {
    const inFlight: Array<() => void> = [];
    const own = await listen(
      (req, res) => {
        inFlight.push(() => res.end(`answer to ${req.url}`));
      },
      { host: '127.0.0.1', port: 0 },
    );
    const answer = raw(own.port, 'GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n', true);
    while (inFlight.length < 1) await new Promise((r) => setTimeout(r, 5));
    const closed = own.close(5_000);
    // One at a time: the second is handled once the first is answered.
    inFlight[0]();
    while (inFlight.length < 2) await new Promise((r) => setTimeout(r, 5));
    inFlight[1]();
    const text = await answer;
    assert.equal(text.match(/HTTP\/1\.1 200 OK\r\n/g)?.length, 2, text);
    const second = text.slice(text.lastIndexOf('HTTP/1.1 200'));
    assert.match(second, /\r\nConnection: close\r\n/i, text);
    assert.ok(text.includes('answer to /1') && second.endsWith('answer to /2'), text);
    await closed;
  });
});

describe('gatehouse/serving/http-server with pipelined requests', () => {
  it('handles the pipelined requests of a connection one at a time, in order, serving other connections meanwhile', async () => {
    const started: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const own = await listen(
      (req, res) => {
        started.push(req.url!);
        if (req.url === '/slow') void released.then(() => res.end('slow'));
        else res.end(`answer to ${req.url}`);
      },
      { host: '127.0.0.1', port: 0 },
    );
    try {
      const pipelined = raw(
        own.port,
        'GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
        true,
      );
      while (started.length < 1) await new Promise((r) => setTimeout(r, 5));
      // Another connection is served while the first waits on its slow answer.
      const other = await fetch(`http://127.0.0.1:${own.port}/other`);
      assert.equal(await other.text(), 'answer to /other');
      assert.deepEqual(started, ['/slow', '/other'], 'the requests behind the slow one wait for it');
      release();
      const text = await pipelined;
      assert.deepEqual(started, ['/slow', '/other', '/a', '/b']);
      assert.deepEqual(
        text.match(/\r\n\r\n[^H]*/g)?.map((body) => body.slice(4)),
        ['slow', 'answer to /a', 'answer to /b'],
      );
    } finally {
      await own.close(0);
    }
  });
});

describe('gatehouse/serving/http-server with pipelined requests behind an answer cut short', () => {
  it('starts none of the requests waiting behind an answer whose connection was destroyed', async () => {
    const started: string[] = [];
    const own = await listen(
      (req, res) => {
        started.push(req.url!);
        if (req.url === '/cut') {
          res.writeHead(200, { 'Content-Length': '100' });
          // The answer breaks off halfway, as a proxied one does when its upstream hangs up.
          res.write('short', () => res.destroy());
        } else {
          res.end(`answer to ${req.url}`);
        }
      },
      { host: '127.0.0.1', port: 0 },
    );
    try {
      const text = await raw(
        own.port,
        'GET /cut HTTP/1.1\r\nHost: x\r\n\r\nDELETE /account/42 HTTP/1.1\r\nHost: x\r\n\r\n',
        true,
      );
      assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
      assert.ok(text.endsWith('short'), text);
      assert.deepEqual(started, ['/cut']);
    } finally {
      await own.close(0);
    }
  });
});

describe('gatehouse/serving/http-server over HTTPS', function () {
  let dir: string;
  let files: { cert: string; key: string };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-https-'));
    files = { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-days',
      '1',
      '-keyout',
      files.key,
      '-out',
      files.cert,
    ]);
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  /** A TCP connection that says nothing, as a port check or a stalled client makes; resolves with what it got once closed. */
  async function silentConnection(port: number) {
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let got = '';
    socket.on('data', (chunk: Buffer) => (got += chunk.toString('latin1')));
    const closed = once(socket, 'close').then(() => got);
    return { socket, closed };
  }

  it('closes at once, when closed, a connection that has not finished its TLS handshake: nothing can be in flight on it', async () => {
    const server = await listen((_req, res) => res.end('ok'), { host: '127.0.0.1', port: 0, tls: files });
    const silent = await silentConnection(server.port);
    try {
      // A grace longer than the test: close() ending at all is the connection closed at once.
      await server.close(600_000);
      assert.equal(await silent.closed, '');
    } finally {
      silent.socket.destroy();
    }
  });

  it('closes at once, when closed, a connection whose handshake is done and on which no request has begun', async () => {
    const server = await listen((_req, res) => res.end('ok'), { host: '127.0.0.1', port: 0, tls: files });
    const socket = tls.connect({ host: '127.0.0.1', port: server.port, ca: readFileSync(files.cert) });
    await once(socket, 'secureConnect');
    const closedByServer = once(socket, 'close');
    try {
      // A grace longer than the test: close() ending at all is the connection closed at once.
      await server.close(600_000);
      await closedByServer;
    } finally {
      socket.destroy();
    }
  });

  it('lets a request in flight over TLS finish when closed', async () => {
    let answer: (() => void) | undefined;
    const server = await listen((_req, res) => (answer = () => res.end('slow done')), {
      host: '127.0.0.1',
      port: 0,
      tls: files,
    });
    const ca = readFileSync(files.cert);
    const body = new Promise<string>((resolve, reject) => {
      https
        .get({ host: '127.0.0.1', port: server.port, path: '/', ca, agent: false }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve(text));
        })
        .on('error', reject);
    });
    while (!answer) await new Promise((r) => setTimeout(r, 5));
    const closed = server.close(5_000);
    answer();
    assert.equal(await body, 'slow done');
    await closed;
  });

  it('lets a TLS handshake under way when closed finish, and answers its request', async () => {
    const server = await listen((_req, res) => res.end('ok'), { host: '127.0.0.1', port: 0, tls: files });
    let closed: Promise<void> | undefined;
    // Closed as soon as the connection is taken, before its handshake is done.
    server.server.once('connection', () => (closed = server.close(5_000)));
    const socket = tls.connect({ host: '127.0.0.1', port: server.port, ca: readFileSync(files.cert) });
    await once(socket, 'secureConnect');
    assert.ok(closed, 'closing began before the handshake was done');
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await once(socket, 'close');
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n[^]*\r\nConnection: close\r\n/i);
    await closed;
  });

  it('lets the app answer a request whose body it cannot read over TLS, with 400 and the error body, and closes the connection', async () => {
    // As the gateway's readers do: the body fails with the error to answer.
    const server = await listen(
      (req, res) => {
        req.on('error', (err: Error & { status?: number; detail?: string }) => {
          const body = JSON.stringify({ detail: err.detail });
          res
            .writeHead(err.status ?? 500, {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            })
            .end(body);
        });
        req.resume();
      },
      { host: '127.0.0.1', port: 0, tls: files },
    );
    try {
      const socket = tls.connect({ host: '127.0.0.1', port: server.port, ca: readFileSync(files.cert) });
      await once(socket, 'secureConnect');
      let text = '';
      socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
      socket.write('POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0x5\r\n');
      await once(socket, 'close');
      assert.match(text, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.match(text, /\r\nConnection: close\r\n/i);
      assert.deepEqual(bodyOf(text), { detail: 'the request body is malformed: Invalid character in chunk size' });
    } finally {
      await server.close(0);
    }
  });

  it('drops a connection whose TLS handshake does not finish in time, without an HTTP answer in it or a line in the access log', async () => {
    const rejected: Rejected[] = [];
    const server = await listen((_req, res) => res.end('ok'), {
      host: '127.0.0.1',
      port: 0,
      tls: files,
      handshakeTimeoutMs: 200,
      onRejected: (r) => rejected.push(r),
    });
    const silent = await silentConnection(server.port);
    try {
      // Closed with nothing written: a connection left open would hold the test past its timeout.
      assert.equal(await silent.closed, '');
      assert.deepEqual(rejected, []);
    } finally {
      silent.socket.destroy();
      await server.close(0);
    }
  });
});

describe('gatehouse/serving/http-server with headers that come one at a time', () => {
  let server: RunningServer;
  const rejected: Rejected[] = [];
  /** The headers timeout of 60 s, shortened; the whole request's timeout left far past this test's, so that it cannot be the one that ends it. */
  const HEADERS_TIMEOUT = 400;

  before(async () => {
    server = await listen((_req, res) => res.end('ok'), {
      host: '127.0.0.1',
      port: 0,
      headersTimeoutMs: HEADERS_TIMEOUT,
      requestTimeoutMs: 600_000,
      onRejected: (r) => rejected.push(r),
    });
    server.acceptUpgrades(true);
  });

  after(() => server.close(1_000));

  /**
   * Sends `head`, then a header line every 20 ms for as long as the
   * connection is open: the whole answer, and how long after the first
   * byte it came, in ms.
   */
  async function trickle(head: string): Promise<{ answer: string; afterMs: number }> {
    const socket = net.connect(server.port, '127.0.0.1');
    await once(socket, 'connect');
    const sent = performance.now();
    socket.write(head);
    let answer = '';
    let afterMs = NaN;
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      if (answer === '') afterMs = performance.now() - sent;
      answer += chunk;
    });
    socket.on('error', () => {});
    let line = 0;
    const writing = setInterval(() => {
      if (!socket.destroyed) socket.write(`X-Slow-${line++}: y\r\n`);
    }, 20);
    try {
      await once(socket, 'close');
    } finally {
      clearInterval(writing);
    }
    return { answer, afterMs };
  }

  it('checks its connections every second against the headers timeout of 60 s and the request timeout of 5 minutes by default', async () => {
    const defaults = await listen((_req, res) => res.end('ok'), { host: '127.0.0.1', port: 0 });
    try {
      const node = defaults.server as http.Server & { connectionsCheckingInterval: number };
      assert.deepEqual(
        [node.headersTimeout, node.requestTimeout, node.connectionsCheckingInterval],
        [60_000, 300_000, 1_000],
      );
    } finally {
      await defaults.close(1_000);
    }
  });

  it('answers 408 and closes a WebSocket handshake whose headers keep coming past the headers timeout', async function () {
    // Node checks every 30 s unless told otherwise: the answer would come long after this test's own timeout.
    this.timeout(20_000);
    const { answer, afterMs } = await trickle(
      'GET /chat HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n',
    );
    assert.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n/, answer);
    assert.match(headerOf(answer, 'connection') ?? '', /close/i);
    assert.deepEqual(bodyOf(answer), { code: 408, message: '408: Request Timeout' });
    assert.ok(afterMs >= HEADERS_TIMEOUT, `answered ${afterMs.toFixed(0)} ms after the first byte`);
  });

  it('answers 408 to a plain request whose headers keep coming, and tells of it', async function () {
    this.timeout(20_000);
    rejected.length = 0;
    const { answer } = await trickle('GET /slow HTTP/1.1\r\nHost: x\r\n');
    assert.match(answer, /^HTTP\/1\.1 408 /, answer);
    assert.deepEqual(
      told(rejected).map((r) => r.status),
      [408],
    );
  });
});
