import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import type http from 'node:http';
import http2 from 'node:http2';
import { promisify } from 'node:util';
import { listen, type RunningServer } from '../../../src/gatehouse';
import { cutShortBy } from '../../../src/http';
import { h2Connect, h2Request } from '../../support/http2-client';
import { RawH2 } from '../../support/http2-frames';

const run = promisify(execFile);

/** A handler that answers `/slow` when told, anything else at once; and says how each answer ended. */
function slowHandler() {
  const waiting: (() => void)[] = [];
  const ended: (string | undefined)[] = [];
  const handler: http.RequestListener = (req, res) => {
    res.once('close', () => ended.push(res.writableFinished ? 'finished' : cutShortBy(res)));
    if (req.url === '/slow') waiting.push(() => res.end('slow done'));
    else res.end('ok');
  };
  return { handler, waiting, ended };
}

/** Resolves once `fn` is true, looking each turn of the event loop. */
async function until(fn: () => boolean): Promise<void> {
  while (!fn()) await new Promise((resolve) => setImmediate(resolve));
}

describe('gatehouse/serving: HTTP/2 connections through a drain and a close', () => {
  it('sends each connection a GOAWAY on drain, and still answers what it had sent', async () => {
    const { handler, waiting } = slowHandler();
    const server = await listen(handler, { host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${server.port}`;
    const session = await h2Connect(base);
    try {
      const slow = h2Request(session, '/slow');
      await until(() => waiting.length === 1);
      const goaway = once(session, 'goaway');
      server.drain();
      const [code] = (await goaway) as [number];
      assert.equal(code, http2.constants.NGHTTP2_NO_ERROR);
      waiting[0]();
      assert.equal((await slow).text, 'slow done');
      await once(session, 'close');
    } finally {
      session.destroy();
      await server.close(0);
    }
  });

  it('answers the first requests of a connection opened while draining, then sends it a GOAWAY', async () => {
    const { handler } = slowHandler();
    const server = await listen(handler, { host: '127.0.0.1', port: 0 });
    server.drain();
    const session = await h2Connect(`http://127.0.0.1:${server.port}`);
    try {
      const goaway = once(session, 'goaway');
      assert.equal((await h2Request(session, '/x')).text, 'ok');
      await goaway;
    } finally {
      session.destroy();
      await server.close(0);
    }
  });

  it('closes idle connections at once when it closes, and lets a request in flight finish', async () => {
    const { handler, waiting, ended } = slowHandler();
    const server = await listen(handler, { host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${server.port}`;
    const idle = await h2Connect(base);
    const busy = await h2Connect(base);
    try {
      const slow = h2Request(busy, '/slow');
      await until(() => waiting.length === 1);
      // A grace far past the test's own timeout: the close resolves only because every connection closed.
      const closed = server.close(600_000);
      await once(idle, 'close');
      waiting[0]();
      assert.equal((await slow).text, 'slow done');
      await closed;
      assert.deepEqual(ended, ['finished']);
    } finally {
      idle.destroy();
      busy.destroy();
    }
  });

  it('cuts what is still answered when the grace runs out, as cut by the shutdown', async () => {
    const { handler, waiting, ended } = slowHandler();
    const server = await listen(handler, { host: '127.0.0.1', port: 0 });
    const session = await h2Connect(`http://127.0.0.1:${server.port}`);
    try {
      const slow = h2Request(session, '/slow').catch((err: Error) => err);
      await until(() => waiting.length === 1);
      await server.close(50);
      assert.ok((await slow) instanceof Error);
      assert.deepEqual(ended, ['shutdown']);
    } finally {
      session.destroy();
    }
  });

  it('closes a connection that sends the preface but never its SETTINGS, within the headers timeout', async () => {
    const server = await listen(slowHandler().handler, { host: '127.0.0.1', port: 0, headersTimeoutMs: 500 });
    const raw = await RawH2.connect(server.port, false);
    try {
      raw.write(Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'));
      await raw.whenClosed();
      assert.equal(raw.goaway()?.code, http2.constants.NGHTTP2_SETTINGS_TIMEOUT);
    } finally {
      raw.destroy();
      await server.close(0);
    }
  });

  it('closes a connection with no stream open once the keep-alive timeout has passed', async () => {
    const server = await listen(slowHandler().handler, { host: '127.0.0.1', port: 0, keepAliveTimeoutMs: 200 });
    const session = await h2Connect(`http://127.0.0.1:${server.port}`);
    try {
      assert.equal((await h2Request(session, '/x')).text, 'ok');
      const [code] = (await once(session, 'goaway')) as [number];
      assert.equal(code, http2.constants.NGHTTP2_NO_ERROR);
      await once(session, 'close');
    } finally {
      session.destroy();
      await server.close(0);
    }
  });

  it('answers 408 to a request whose body has not all come within the request timeout, and keeps its connection', async () => {
    const handler: http.RequestListener = (req, res) => {
      req.on('error', (err: Error & { status?: number }) => {
        res.statusCode = err.status ?? 500;
        res.end(err.message);
      });
      req.resume();
      req.on('end', () => res.end('whole'));
    };
    const server = await listen(handler, { host: '127.0.0.1', port: 0, requestTimeoutMs: 300 });
    const session = await h2Connect(`http://127.0.0.1:${server.port}`);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/upload' }, { endStream: false });
      stream.write('the first part, and nothing after it');
      const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
      assert.equal(headers[':status'], 408);
      stream.resume();
      await once(stream, 'close');
      assert.equal((await h2Request(session, '/x', { method: 'POST', body: 'all of it' })).text, 'whole');
    } finally {
      session.destroy();
      await server.close(0);
    }
  });

  describe('with HTTP/2 off', () => {
    let server: RunningServer;
    before(async () => {
      server = await listen(slowHandler().handler, { host: '127.0.0.1', port: 0, http2: false });
    });
    after(() => server.close(0));

    it('serves HTTP/1.1 alone: a client with prior knowledge of HTTP/2 gets no HTTP/2', async () => {
      const h2 = await run('curl', [
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_version}',
        '--http2-prior-knowledge',
        `http://127.0.0.1:${server.port}/`,
      ]).catch((err: { stdout: string }) => err);
      assert.notEqual(h2.stdout, '2');
      const h1 = await run('curl', ['-s', '-w', ' %{http_version}', `http://127.0.0.1:${server.port}/`]);
      assert.equal(h1.stdout, 'ok 1.1');
    });
  });
});
