import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { createAuthStage } from '../../../../src/gateway/stages/auth-stage';
import { memoryLogger } from '../../../support/memory-logger';
import { close, listen } from '../../../support/server';
import { configOf, mapping } from '../../../support/records';
import { recordingUpstream } from '../../../support/upstreams';
import { send } from '../../../support/client';

/**
 * An auth service that answers with the bytes a test writes on the socket,
 * once it has read a request's head: what no well-behaved HTTP server sends.
 */
class ScriptedAuthService {
  script: (socket: Socket) => void = (socket) => socket.end();
  requests = 0;
  readonly server: TcpServer = createTcpServer((socket) => {
    socket.on('error', () => undefined);
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      this.requests++;
      this.script(socket);
    };
    socket.on('data', onData);
  });
  port = 0;
  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }
}

/** Writes `count` chunks of `size` bytes, `everyMs` apart, until the socket closes. */
function drip(socket: Socket, size: number, everyMs: number, count: number): void {
  let left = count;
  const timer = setInterval(() => {
    if (socket.destroyed || left-- === 0) return clearInterval(timer);
    socket.write(Buffer.alloc(size, 'a'));
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
}

describe('the auth stage, when the remote auth service misbehaves on the wire', () => {
  const auth = new ScriptedAuthService();
  let backend: Awaited<ReturnType<typeof recordingUpstream>>;
  let gateway: Gateway | undefined;
  let server: Server | undefined;
  let base = '';
  let log = memoryLogger();

  const start = async (fields: Record<string, unknown> = {}) => {
    log = memoryLogger();
    gateway = createGateway({
      stages: { auth: (record, modules) => createAuthStage(record, modules, { logger: log }) },
      config: configOf(mapping('/remote', backend.url), {
        apiVersion: 'gateway/v1',
        kind: 'AuthService',
        name: 'authentication',
        auth_service: `127.0.0.1:${auth.port}`,
        ...fields,
      }),
    });
    const up = await listen(gateway.app.callback());
    server = up.server;
    base = up.url;
  };

  before(async () => {
    await auth.start();
    backend = await recordingUpstream();
  });
  beforeEach(() => {
    backend.received.length = 0;
    auth.requests = 0;
  });
  afterEach(async () => {
    await close(server);
    await gateway?.close();
    server = undefined;
    gateway = undefined;
  });
  after(async () => {
    await new Promise<void>((resolve) => auth.server.close(() => resolve()));
    await close(backend.server);
  });

  const failures: Array<[string, (socket: Socket) => void]> = [
    ['answers something that is not HTTP', (socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n')],
    ['closes the connection without answering', (socket) => socket.destroy()],
    [
      'closes the connection in the middle of its body',
      (socket) => {
        socket.write('HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nhalf an ans');
        setTimeout(() => socket.destroy(), 20);
      },
    ],
    [
      'sends a body of 10 MiB',
      (socket) => {
        socket.write('HTTP/1.1 401 Unauthorized\r\nContent-Length: 10485760\r\n\r\n');
        drip(socket, 64 * 1024, 5, 160);
      },
    ],
    [
      'sends a chunked body without end',
      (socket) => {
        socket.write('HTTP/1.1 403 Forbidden\r\nTransfer-Encoding: chunked\r\n\r\n');
        const chunk = `10000\r\n${'b'.repeat(0x10000)}\r\n`;
        let sent = 0;
        const timer = setInterval(
          () => (socket.destroyed || ++sent > 200 ? clearInterval(timer) : socket.write(chunk)),
          2,
        );
      },
    ],
    ['answers a status above 599', (socket) => socket.end('HTTP/1.1 999 Odd\r\nContent-Length: 0\r\n\r\n')],
  ];
  for (const [what, script] of failures) {
    it(`answers status_on_error with the error body, and logs it, when the auth service ${what}`, async () => {
      auth.script = script;
      await start({ status_on_error: { code: 503 } });
      const res = await send(base, '/remote/x', { headers: { Authorization: 'Basic YWxpY2U6d29uZGVybGFuZA==' } });
      assert.equal(res.status, 503);
      assert.deepEqual(res.json(), {
        code: 503,
        message: '503: Service Unavailable',
        detail: 'the auth service is unavailable',
      });
      assert.equal(backend.received.length, 0);
      assert.equal(log.lines.length, 1, log.text());
      assert.ok(!log.text().includes('YWxpY2U6d29uZGVybGFuZA=='));
    });

    it(`lets the request on without a user when the auth service ${what} and failure_mode_allow is set`, async () => {
      auth.script = script;
      await start({ failure_mode_allow: true });
      const res = await send(base, '/remote/x', { headers: { 'X-Travel-User': 'mallory' } });
      assert.equal(res.status, 200);
      assert.equal(backend.received.length, 1);
      assert.equal(backend.received[0].headers['x-travel-user'], undefined);
    });
  }

  it('counts timeout_ms to the end of the answer: a slow body after quick headers is a failure', async () => {
    auth.script = (socket) => {
      socket.write('HTTP/1.1 200 OK\r\nX-Travel-User: alice\r\nContent-Length: 40\r\n\r\n');
      // A byte a second: the whole body would take 40 s, longer than the test.
      drip(socket, 1, 1000, 40);
    };
    await start({ timeout_ms: 300 });
    const began = Date.now();
    const res = await send(base, '/remote/x');
    const took = Date.now() - began;
    assert.equal(res.status, 403);
    assert.ok(took >= 250, `answered after ${took} ms`);
    assert.equal(backend.received.length, 0);
  });

  it('refuses an answer that announces more than 64 KiB at once, without waiting for it', async () => {
    auth.script = (socket) => socket.write('HTTP/1.1 401 Unauthorized\r\nContent-Length: 10485760\r\n\r\n');
    // A deadline longer than the test, and no body ever comes: the answer is the refusal of the length.
    await start({ timeout_ms: 600_000 });
    const res = await send(base, '/remote/x');
    assert.equal(res.status, 403);
    assert.match(String((log.lines[0].obj as { err?: unknown }).err), /more than 65536 bytes/);
  });

  it('waits past informational answers for the final one, and passes that on', async () => {
    auth.script = (socket) =>
      socket.end(
        'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n' +
          'HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm="x"\r\nContent-Length: 0\r\n\r\n',
      );
    await start();
    const res = await send(base, '/remote/x');
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], 'Basic realm="x"');
    assert.equal(res.headers.link, undefined);
  });

  it('counts an informational answer with nothing after it as no answer, within timeout_ms', async () => {
    auth.script = (socket) => socket.write('HTTP/1.1 100 Continue\r\n\r\n');
    await start({ timeout_ms: 200 });
    const res = await send(base, '/remote/x');
    assert.equal(res.status, 403);
  });

  it('does not follow a redirect of the auth service, even one back to itself: the client gets it once', async () => {
    auth.script = (socket) =>
      socket.end(
        `HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:${auth.port}/remote/x\r\nContent-Length: 0\r\n\r\n`,
      );
    await start();
    const res = await send(base, '/remote/x');
    assert.equal(res.status, 307);
    assert.equal(res.headers.location, `http://127.0.0.1:${auth.port}/remote/x`);
    assert.equal(auth.requests, 1);
    assert.equal(backend.received.length, 0);
  });
});
