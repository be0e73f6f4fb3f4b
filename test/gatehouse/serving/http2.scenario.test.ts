import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { promisify } from 'node:util';
import { listen, type Rejected, type RunningServer } from '../../../src/gatehouse';
import { h2Connect, h2Request, h2Send } from '../../support/http2-client';
import { FLAG, FRAME, frame, PREFACE, RawH2, requestBlock, settings } from '../../support/http2-frames';

const run = promisify(execFile);

/** What the handler saw of a request. */
interface Seen {
  httpVersion: string;
  method: string;
  url: string;
  host?: string;
  rawNames: string[];
  body: string;
}

/** A handler that answers what it saw, and a few answers HTTP/2 carries otherwise than HTTP/1.1. */
const handler: http.RequestListener = (req, res) => {
  if (req.url === '/early') {
    // Answered before the body is read: the client is told to stop sending it.
    res.statusCode = 413;
    res.end('too large');
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.url === '/hop-by-hop') {
      res.setHeader('Connection', 'close, X-Private');
      res.setHeader('Keep-Alive', 'timeout=5');
      res.setHeader('Transfer-Encoding', 'chunked');
      res.setHeader('Upgrade', 'websocket');
      res.setHeader('Proxy-Connection', 'keep-alive');
      res.setHeader('X-Kept', 'yes');
    }
    if (req.url === '/trailers') res.addTrailers({ 'X-Checksum': 'abc' });
    if (req.url === '/stream') {
      res.write('one,');
      setImmediate(() => res.end('two'));
      return;
    }
    const seen: Seen = {
      httpVersion: req.httpVersion,
      method: req.method!,
      url: req.url!,
      host: req.headers.host,
      rawNames: req.rawHeaders.filter((_, i) => i % 2 === 0),
      body: Buffer.concat(chunks).toString('utf8'),
    };
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(seen));
  });
};

describe('gatehouse/serving over HTTP/2', () => {
  let server: RunningServer;
  let base = '';
  const rejected: Rejected[] = [];

  before(async () => {
    server = await listen(handler, {
      host: '127.0.0.1',
      port: 0,
      headersTimeoutMs: 1000,
      onRejected: (r) => rejected.push(r),
    });
    base = `http://127.0.0.1:${server.port}`;
  });
  beforeEach(() => {
    rejected.length = 0;
  });
  after(() => server.close(0));

  it('serves HTTP/2 with prior knowledge and HTTP/1.1 on the same port', async () => {
    const h2 = await h2Send(base, '/x');
    assert.equal(h2.status, 200);
    assert.equal(h2.json().httpVersion, '2.0');
    const h1 = await new Promise<Seen>((resolve, reject) => {
      http
        .get(`${base}/x`, { agent: false }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve(JSON.parse(text) as Seen));
        })
        .on('error', reject);
    });
    assert.equal(h1.httpVersion, '1.1');
  });

  it('gives the app the :authority as Host, and the header fields without the pseudo-headers', async () => {
    const seen = (await h2Send(base, '/x?y=1', { headers: { 'x-one': '1' } })).json() as Seen;
    assert.equal(seen.url, '/x?y=1');
    assert.equal(seen.host, `127.0.0.1:${server.port}`);
    assert.deepEqual(seen.rawNames, ['x-one']);
  });

  it('answers 400 with the error body to a Host that names another authority than :authority', async () => {
    const authority = `127.0.0.1:${server.port}`;
    const res = await h2Send(base, '/x', { headers: { ':authority': authority, host: 'other.example' } });
    assert.equal(res.status, 400);
    assert.deepEqual(res.json(), {
      code: 400,
      message: '400: Bad Request',
      detail: 'the Host header names another authority than :authority',
    });
    assert.deepEqual(
      rejected.map((r) => [r.status, r.protocol]),
      [[400, 'HTTP/2']],
    );
    const same = await h2Send(base, '/x', { headers: { ':authority': authority, host: authority } });
    assert.equal(same.status, 200);
  });

  it('answers CONNECT with 501 and the error body: the gateway tunnels nothing', async () => {
    const session = await h2Connect(base);
    try {
      const stream = session.request({ ':method': 'CONNECT', ':authority': '127.0.0.1:22' });
      const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
      let text = '';
      stream.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      await once(stream, 'end');
      assert.equal(headers[':status'], 501);
      assert.equal((JSON.parse(text) as { code: number }).code, 501);
    } finally {
      session.close();
    }
  });

  it('meets Expect: 100-continue, and answers any other expectation with 417', async () => {
    const ok = await h2Send(base, '/x', { method: 'POST', headers: { expect: '100-continue' }, body: 'hi' });
    assert.equal(ok.status, 200);
    assert.equal(ok.json().body, 'hi');
    const refused = await h2Send(base, '/x', { headers: { expect: 'foo' } });
    assert.equal(refused.status, 417);
    assert.equal(refused.json().code, 417);
  });

  it('answers 431 to more than 100 header fields, as over HTTP/1.1', async () => {
    const headers: http2.OutgoingHttpHeaders = {};
    for (let i = 0; i < 101; i++) headers[`x-f${i}`] = 'v';
    const res = await h2Send(base, '/x', { headers });
    assert.equal(res.status, 431);
    assert.equal(res.json().code, 431);
    for (let i = 1; i < 101; i++) delete headers[`x-f${i}`];
    assert.equal((await h2Send(base, '/x', { headers })).status, 200);
  });

  it('reads a body sent with a length and one sent in frames without a length', async () => {
    const sized = await h2Send(base, '/x', { method: 'POST', body: 'whole' });
    assert.equal(sized.json().body, 'whole');
    const framed = await h2Send(base, '/x', { method: 'POST', body: ['in ', 'parts'] });
    assert.equal(framed.json().body, 'in parts');
  });

  it('drops the headers of one HTTP/1.1 connection that the app sets, as RFC 9113 requires', async () => {
    const res = await h2Send(base, '/hop-by-hop');
    assert.equal(res.status, 200);
    for (const name of ['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection'])
      assert.equal(res.headers[name], undefined, name);
    assert.equal(res.headers['x-kept'], 'yes');
  });

  it('sends trailers to a client that takes them (TE: trailers), and none to another', async () => {
    const taking = await h2Send(base, '/trailers', { headers: { te: 'trailers' } });
    assert.equal(taking.trailers['x-checksum'], 'abc');
    const other = await h2Send(base, '/trailers');
    assert.equal(other.trailers['x-checksum'], undefined);
    assert.equal(other.status, 200);
  });

  it('streams an answer written in parts, and answers HEAD without a body', async () => {
    assert.equal((await h2Send(base, '/stream')).text, 'one,two');
    const head = await h2Send(base, '/x', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  });

  it('tells a client answered before its body to stop sending it, and keeps its connection', async () => {
    const session = await h2Connect(base);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/early' });
      stream.write(Buffer.alloc(1024));
      const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
      assert.equal(headers[':status'], 413);
      stream.resume();
      await once(stream, 'close');
      assert.equal(stream.rstCode, http2.constants.NGHTTP2_NO_ERROR);
      assert.equal((await h2Request(session, '/x')).status, 200);
    } finally {
      session.close();
    }
  });

  it('serves a preface that comes a few bytes at a time', async () => {
    const raw = await RawH2.connect(server.port, false);
    try {
      const hello = Buffer.concat([PREFACE, settings()]);
      for (let at = 0; at < hello.length; at += 5) {
        raw.write(hello.subarray(at, at + 5));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const block = requestBlock(`127.0.0.1:${server.port}`, '/slow');
      raw.write(frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, block));
      const data = await raw.until((f) => f.type === FRAME.DATA && f.stream === 1);
      assert.equal((JSON.parse(data.payload.toString('utf8')) as Seen).url, '/slow');
    } finally {
      raw.destroy();
    }
  });

  it('closes a connection that sends part of the preface and stops, within the headers timeout', async () => {
    const socket = net.connect(server.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('PRI * HTTP/2');
    socket.resume();
    await once(socket, 'close');
  });

  it('answers curl with --http2-prior-knowledge', async () => {
    const { stdout } = await run('curl', ['-s', '--http2-prior-knowledge', '-w', '\n%{http_version}', `${base}/curl`]);
    const [body, version] = stdout.split('\n');
    assert.equal(version, '2');
    assert.equal((JSON.parse(body) as Seen).url, '/curl');
  });
});
