import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { close, listen, mapping, send } from '../helpers';
import { testGateway, type TestGateway } from './rig';

/** 200 KiB: past what is read whole (64 KiB), so streamed. */
const LONG = Buffer.alloc(200 * 1024, 'abcdefghij');

describe('an upstream answer on its way back', () => {
  let upstream: http.Server;
  let raw: net.Server;
  let rig: TestGateway;
  /** Per path: how many times it was asked. */
  const asked = new Map<string, number>();
  /** Resolves when the upstream's answer on /cut/ was closed before its end. */
  let cutClosed: Promise<void>;
  let markCutClosed: () => void;

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
      } else {
        res.writeHead(200, { 'content-length': 2 }).end('ok');
      }
    });
    upstream = up.server;
    // Informational answers before the final one, as a server sending Early Hints does.
    raw = net.createServer((socket) => {
      socket.once('data', () => {
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
      mapping('/retry-long/', `http://${address}`, { name: 'retry-long', rewrite: '', retry_policy: { retry_on: '5xx' } }),
      mapping('/long/', `http://${address}`, { name: 'long', rewrite: '' }),
      mapping('/unsized/', `http://${address}`, { name: 'unsized', rewrite: '' }),
      mapping('/cut/', `http://${address}`, { name: 'cut', rewrite: '' }),
      mapping('/hints/', `http://127.0.0.1:${rawPort}`, { name: 'hints' }),
    ]);
  });

  beforeEach(() => {
    asked.clear();
    cutClosed = new Promise((resolve) => (markCutClosed = resolve));
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
});
