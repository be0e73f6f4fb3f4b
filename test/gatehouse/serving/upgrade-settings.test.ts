/**
 * When the server hands upgrades to the gateway: only while a Mapping allows
 * one (a reload turns it on and off), never once it is stopping, and over
 * HTTPS as over HTTP.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, WebSocket } from 'undici';
import { ALICE } from '../../support/credentials';
import { copyConfig, type TempConfig } from '../../support/config-folder';
import { startGatehouse, type Running } from '../../support/gatehouse';
import {
  echoUpstream,
  exchange,
  headDone,
  servicesYaml,
  WEBSOCKET_HEADERS,
  type EchoUpstream,
} from '../../support/websocket';

/** Sockets this process's servers accept, as they accept them. */
const accepted: net.Socket[] = [];
const onAccepted = (message: unknown) => accepted.push((message as { socket: net.Socket }).socket);

/** Resolves once the server end of `client` (a server of this process) has read bytes from it. */
async function readByServer(client: net.Socket): Promise<void> {
  for (;;) {
    const end = accepted.find((s) => s.remotePort === client.localPort);
    if (end !== undefined && end.bytesRead > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('gatehouse upgrade settings', function () {
  let upstream: EchoUpstream;
  let config: TempConfig;
  let running: Running | undefined;

  before(async () => {
    upstream = await echoUpstream();
  });

  beforeEach(() => {
    config = copyConfig();
    upstream.handshakes.length = 0;
  });

  afterEach(async () => {
    await running?.stop();
    running = undefined;
    config.remove();
  });

  after(async () => {
    await upstream?.close();
  });

  it('tunnels only while a Mapping allows upgrades: a reload turns it on and off', async () => {
    const route = { name: 'chat', prefix: '/chat/', service: upstream.address, bypass_auth: true };
    config.write('services.yaml', servicesYaml(route));
    running = await startGatehouse({ configDir: config.dir });
    const port = Number(new URL(running.url).port);
    const handshake = `GET /chat/x HTTP/1.1\r\nHost: gw\r\n${WEBSOCKET_HEADERS}\r\n`;
    assert.match((await exchange(port, handshake)).reply, /^HTTP\/1\.1 426 /);

    config.write('services.yaml', servicesYaml({ ...route, allow_upgrade: ['websocket'] }));
    assert.deepEqual(await running.gatehouse.reload(), { ok: true });
    assert.match(
      (await exchange(port, handshake, { until: headDone })).reply,
      /^HTTP\/1\.1 101 Switching Protocols\r\n/,
    );

    config.write('services.yaml', servicesYaml(route));
    assert.deepEqual(await running.gatehouse.reload(), { ok: true });
    assert.match((await exchange(port, handshake)).reply, /^HTTP\/1\.1 426 /);
  });

  it('refuses an upgrade with 503 once it is stopping', async () => {
    config.write(
      'services.yaml',
      servicesYaml({
        name: 'chat',
        prefix: '/chat/',
        service: upstream.address,
        allow_upgrade: ['websocket'],
        bypass_auth: true,
      }),
    );
    // A grace longer than the test: the handshake is finished however slowly.
    running = await startGatehouse({ configDir: config.dir, shutdownGraceMs: 600_000 });
    const port = Number(new URL(running.url).port);
    // A handshake begun before the stop, finished after it.
    diagnostics.subscribe('net.server.socket', onAccepted);
    const socket = net.connect(port, '127.0.0.1');
    try {
      await once(socket, 'connect');
      socket.write('GET /chat/late HTTP/1.1\r\nHost: gw\r\n');
      // In the server's hands, however busy the machine: a connection it has read nothing from is closed at once.
      await readByServer(socket);
    } finally {
      diagnostics.unsubscribe('net.server.socket', onAccepted);
      accepted.length = 0;
    }
    const stopped = running.stop();
    running = undefined;
    socket.write(`${WEBSOCKET_HEADERS}\r\n`);
    let reply = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (reply += chunk));
    await once(socket, 'close');
    await stopped;
    assert.match(reply, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
    assert.match(reply, /\r\nConnection: close\r\n/);
    assert.ok(reply.endsWith('"detail":"the gateway is shutting down: connect again"}'), reply);
    assert.equal(upstream.handshakes.length, 0);
  });

  it('tunnels wss over HTTPS, and serves an upgrade request with a body there as plain HTTP', async () => {
    const cert = join(config.dir, 'cert.pem');
    const key = join(config.dir, 'key.pem');
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-days',
      '1',
      '-keyout',
      key,
      '-out',
      cert,
    ]);
    const ca = readFileSync(cert);
    config.write(
      'services.yaml',
      servicesYaml(
        { name: 'chat', prefix: '/chat/', service: upstream.address, allow_upgrade: ['websocket'] },
        { name: 'api', prefix: '/v1', service: 'api', rewrite: '', bypass_auth: true },
      ),
    );
    running = await startGatehouse({ configDir: config.dir, tls: { cert, key } });
    const port = Number(new URL(running.url).port);

    const dispatcher = new Agent({ connect: { ca } });
    const socket = new WebSocket(`wss://localhost:${port}/chat/secure`, {
      headers: { authorization: ALICE },
      dispatcher,
    });
    const greeting = await new Promise<string>((resolve, reject) => {
      socket.addEventListener('message', (event) => resolve(String(event.data)));
      socket.addEventListener('error', () => reject(new Error('the wss handshake failed')));
    });
    assert.equal(greeting, 'hello /secure');
    socket.close();
    await dispatcher.close();

    const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n';
    const { reply, closed } = await exchange(
      port,
      `POST /v1/messages/1 HTTP/1.1\r\nHost: localhost\r\n${h2c}Content-Length: 2\r\n\r\n{}GET /v1/messages/1 HTTP/1.1\r\nHost: localhost\r\n\r\n`,
      // Both answered, the GET's JSON body whole.
      { ca, until: (reply) => (reply.match(/HTTP\/1\.1 \d+/g)?.length ?? 0) === 2 && reply.endsWith('}') },
    );
    // The message is read-only: the POST is read whole and refused, the GET behind it answered on the same connection.
    assert.deepEqual(reply.match(/HTTP\/1\.1 \d+/g), ['HTTP/1.1 405', 'HTTP/1.1 200'], reply);
    assert.equal(closed, false);
  });
});
