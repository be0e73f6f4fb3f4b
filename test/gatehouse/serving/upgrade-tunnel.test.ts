/**
 * WebSocket through a started Gatehouse: a Mapping with `allow_upgrade`
 * tunnels the connection to its remote upstream once auth and rate limits
 * let the request through; any other upgrade is served as plain HTTP.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { freePort } from '../../support/ports';
import { ALICE } from '../../support/credentials';
import { copyConfig, type TempConfig } from '../../support/config-folder';
import { startGatehouse, type Running } from '../../support/gatehouse';
import {
  connect,
  echoUpstream,
  exchange,
  servicesYaml,
  WEBSOCKET_HEADERS,
  type EchoUpstream,
} from '../../support/websocket';

const LIMITED = {
  gateway: [
    {
      request_label_group: [{ 'x-gateway-test-allow': { header: 'x-gateway-test-allow', omit_if_not_present: true } }],
    },
  ],
};

describe('gatehouse WebSocket tunnels', function () {
  let upstream: EchoUpstream;
  let refusing: http.Server;
  let silent: net.Server;
  let garbled: net.Server;
  let coded: net.Server;
  let continuing: net.Server;
  let config: TempConfig;
  let running: Running;
  let port: number;
  let ws: string;

  before(async () => {
    upstream = await echoUpstream();
    // An upstream that answers every upgrade with a refusal of its own.
    refusing = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      const answer = () => res.end(`${req.method} ${req.url} ${body} upgrade=${req.headers.upgrade}`);
      req.on('end', () => (req.url?.startsWith('/slow') ? setTimeout(answer, 200) : answer()));
    });
    refusing.on('upgrade', (_req, socket) =>
      socket.end(
        'HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 11\r\nConnection: close\r\n\r\nnot for you',
      ),
    );
    // One that takes the connection and never answers.
    silent = net.createServer(() => undefined);
    // One that agrees in a 101 no HTTP parser takes (a control character in a header).
    garbled = net.createServer((socket) =>
      socket.once('data', () =>
        socket.write(
          'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-Bad: a\x7fb\r\n\r\n',
        ),
      ),
    );
    // One that refuses in a transfer coding the gateway cannot pass on, and one that sends an unasked-for 100 first.
    coded = net.createServer((socket) =>
      socket.once('data', () =>
        socket.end(
          'HTTP/1.1 403 Forbidden\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
        ),
      ),
    );
    continuing = net.createServer((socket) =>
      socket.once('data', () =>
        socket.end(
          'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno',
        ),
      ),
    );
    await Promise.all(
      [refusing, silent, garbled, coded, continuing].map(
        (server) => new Promise<void>((r) => server.listen(0, '127.0.0.1', r)),
      ),
    );
    const dead = await freePort();
    config = copyConfig();
    const websocket = ['websocket'];
    config.write(
      'services.yaml',
      servicesYaml(
        {
          name: 'chat',
          prefix: '/chat/',
          service: upstream.address,
          allow_upgrade: ['WebSocket'],
          add_request_headers: { 'x-added': 'by-gateway' },
          add_response_headers: { 'x-route': 'chat' },
        },
        { name: 'plain', prefix: '/plain/', service: upstream.address },
        {
          name: 'limited',
          prefix: '/limited/',
          service: upstream.address,
          allow_upgrade: websocket,
          bypass_auth: true,
          labels: LIMITED,
        },
        {
          name: 'refusing',
          prefix: '/refusing/',
          service: `127.0.0.1:${(refusing.address() as net.AddressInfo).port}`,
          allow_upgrade: websocket,
          bypass_auth: true,
        },
        {
          name: 'silent',
          prefix: '/silent/',
          service: `127.0.0.1:${(silent.address() as net.AddressInfo).port}`,
          use_websocket: true,
          bypass_auth: true,
          timeout_ms: 200,
        },
        { name: 'dead', prefix: '/dead/', service: `127.0.0.1:${dead}`, allow_upgrade: websocket, bypass_auth: true },
        {
          name: 'garbled',
          prefix: '/garbled/',
          service: `127.0.0.1:${(garbled.address() as net.AddressInfo).port}`,
          allow_upgrade: websocket,
          bypass_auth: true,
        },
        {
          name: 'coded',
          prefix: '/coded/',
          service: `127.0.0.1:${(coded.address() as net.AddressInfo).port}`,
          allow_upgrade: websocket,
          bypass_auth: true,
        },
        {
          name: 'continuing',
          prefix: '/continuing/',
          service: `127.0.0.1:${(continuing.address() as net.AddressInfo).port}`,
          allow_upgrade: websocket,
          bypass_auth: true,
        },
      ),
    );
    running = await startGatehouse({ configDir: config.dir, shutdownGraceMs: 300 });
    port = Number(new URL(running.url).port);
    ws = `ws://127.0.0.1:${port}`;
  });

  beforeEach(() => {
    upstream.handshakes.length = 0;
  });

  after(async () => {
    await running?.stop();
    await upstream?.close();
    refusing?.close();
    silent?.close();
    garbled?.close();
    coded?.close();
    continuing?.close();
    config?.remove();
  });

  it('tunnels an authenticated WebSocket to its upstream, both ways', async () => {
    const client = await connect(`${ws}/chat/room?x=1`, { authorization: ALICE, 'x-travel-user': 'bob' });
    assert.equal(await client.message(1), 'hello /room?x=1');
    client.socket.send('ping');
    assert.equal(await client.message(2), 'ping');
    const big = 'x'.repeat(1 << 20);
    client.socket.send(big);
    assert.equal(await client.message(3), big);
    client.socket.close();
    assert.equal(await client.closed, 1005);
    const [handshake] = upstream.handshakes;
    assert.equal(handshake.headers['x-travel-user'], 'alice');
    assert.equal(handshake.headers['x-added'], 'by-gateway');
    assert.equal(handshake.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(handshake.headers['x-forwarded-host'], `127.0.0.1:${port}`);
    assert.equal(handshake.headers.host, upstream.address);
  });

  it("answers the upgrade with the upstream's 101, its WebSocket headers and the route's response edits", async () => {
    const { reply, closed } = await exchange(
      port,
      `GET /chat/raw HTTP/1.1\r\nHost: gw\r\nAuthorization: ${ALICE}\r\nSec-WebSocket-Protocol: chat.v1\r\n${WEBSOCKET_HEADERS}\r\n`,
      {
        until: (reply) => reply.endsWith('hello /raw'),
      },
    );
    assert.match(reply, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    assert.match(reply, /\r\nsec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=\r\n/i);
    assert.match(reply, /\r\nsec-websocket-protocol: chat\.v1\r\n/i);
    assert.match(reply, /\r\nupgrade: websocket\r\n/i);
    assert.match(reply, /\r\nconnection: Upgrade\r\n/i);
    assert.match(reply, /\r\nx-upstream: ws\r\n/i);
    assert.match(reply, /\r\nx-route: chat\r\n/i);
    // The upstream's first frame: a text frame of "hello /raw".
    assert.ok(reply.endsWith('\x81\x0ahello /raw'), JSON.stringify(reply));
    assert.equal(closed, false, 'the tunnel stays open');
  });

  it('answers an upgrade without credentials with 401 and the error body, and tells the upstream nothing', async () => {
    const { reply, closed } = await exchange(port, `GET /chat/room HTTP/1.1\r\nHost: gw\r\n${WEBSOCKET_HEADERS}\r\n`);
    assert.match(reply, /^HTTP\/1\.1 401 Unauthorized\r\n/);
    assert.match(reply, /\r\nwww-authenticate: Basic realm="gatehouse"\r\n/i);
    assert.ok(reply.endsWith('{"code":401,"message":"401: Unauthorized","detail":"credentials are required"}'), reply);
    assert.ok(closed);
    assert.equal(upstream.handshakes.length, 0);
  });

  it('rate limits upgrades as any request: the fourth of a minute with the same label gets 429', async () => {
    const label = `ws-${Date.now()}`;
    for (let i = 0; i < 3; i++) {
      const client = await connect(`${ws}/limited/x`, { 'x-gateway-test-allow': label });
      client.socket.close();
      await client.closed;
    }
    const { reply } = await exchange(
      port,
      `GET /limited/x HTTP/1.1\r\nHost: gw\r\nX-Gateway-Test-Allow: ${label}\r\n${WEBSOCKET_HEADERS}\r\n`,
    );
    assert.match(reply, /^HTTP\/1\.1 429 Too Many Requests\r\n/);
    assert.match(reply, /\r\nretry-after: \d+\r\n/i);
    assert.equal(upstream.handshakes.length, 3);
  });

  it("passes an upstream's refusal of the upgrade on as the answer, and closes", async () => {
    const { reply, closed } = await exchange(port, `GET /refusing/x HTTP/1.1\r\nHost: gw\r\n${WEBSOCKET_HEADERS}\r\n`);
    assert.match(reply, /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.ok(reply.endsWith('\r\n\r\nnot for you'), reply);
    assert.ok(closed);
  });

  it('answers 504 when the upstream does not answer the upgrade within timeout_ms, and 503 when it cannot be reached', async () => {
    const slow = await exchange(port, `GET /silent/x HTTP/1.1\r\nHost: gw\r\n${WEBSOCKET_HEADERS}\r\n`);
    assert.match(slow.reply, /^HTTP\/1\.1 504 Gateway Timeout\r\n/);
    assert.ok(slow.reply.endsWith('"detail":"the upstream service did not answer within 200 ms"}'), slow.reply);
    const dead = await exchange(port, `GET /dead/x HTTP/1.1\r\nHost: gw\r\n${WEBSOCKET_HEADERS}\r\n`);
    assert.match(dead.reply, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
    assert.ok(
      dead.reply.endsWith(
        '{"code":503,"message":"503: Service Unavailable","detail":"the upstream service is unavailable"}',
      ),
      dead.reply,
    );
  });

  it('answers 502 when the upstream agrees in a 101 that is not HTTP, and opens no tunnel', async () => {
    const { reply, closed } = await exchange(port, `GET /garbled/x HTTP/1.1\r\nHost: gw\r\n${WEBSOCKET_HEADERS}\r\n`);
    assert.match(reply, /^HTTP\/1\.1 502 Bad Gateway\r\n/);
    assert.ok(reply.endsWith('"detail":"the upstream service failed to answer"}'), reply);
    assert.ok(closed);
  });

  it('answers 502, as on any route, to a refusal in a transfer coding other than chunked and to an unasked-for 100 Continue', async () => {
    const { reply: codedReply } = await exchange(port, `GET /coded/x HTTP/1.1\r\nHost: gw\r\n${WEBSOCKET_HEADERS}\r\n`);
    assert.match(codedReply, /^HTTP\/1\.1 502 Bad Gateway\r\n/);
    assert.ok(
      codedReply.endsWith('"detail":"the upstream service answered in a transfer coding other than chunked"}'),
      codedReply,
    );
    const { reply: continued } = await exchange(
      port,
      `GET /continuing/x HTTP/1.1\r\nHost: gw\r\n${WEBSOCKET_HEADERS}\r\n`,
    );
    assert.match(continued, /^HTTP\/1\.1 502 Bad Gateway\r\n/);
    assert.ok(continued.endsWith('"detail":"the upstream service failed to answer"}'), continued);
  });

  it('serves an upgrade on a Mapping without allow_upgrade as plain HTTP: the upstream sees no Upgrade', async () => {
    const { reply, closed } = await exchange(
      port,
      `GET /plain/x HTTP/1.1\r\nHost: gw\r\nAuthorization: ${ALICE}\r\n${WEBSOCKET_HEADERS}\r\n`,
    );
    // ws answers a plain GET with 426 Upgrade Required.
    assert.match(reply, /^HTTP\/1\.1 426 Upgrade Required\r\n/);
    assert.ok(closed);
  });

  it('serves an upgrade request that has a body as plain HTTP with its body, and keeps the connection for the next request', async () => {
    const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n';
    const { reply, closed } = await exchange(
      port,
      `POST /refusing/a HTTP/1.1\r\nHost: gw\r\n${h2c}Content-Length: 5\r\n\r\nhelloGET /refusing/b HTTP/1.1\r\nHost: gw\r\n\r\n`,
      { until: (reply) => reply.endsWith('GET /b  upgrade=undefined') },
    );
    assert.equal(reply.match(/HTTP\/1\.1 200 OK\r\n/g)?.length, 2, reply);
    assert.ok(reply.includes('\r\n\r\nPOST /a hello upgrade=undefined'), reply);
    assert.ok(reply.endsWith('\r\n\r\nGET /b  upgrade=undefined'), reply);
    assert.equal(closed, false);
  });

  it('answers a request pipelined before a handshake first, then switches: answers go out in order', async () => {
    const { reply, closed } = await exchange(
      port,
      `GET /refusing/slow HTTP/1.1\r\nHost: gw\r\n\r\nGET /chat/after HTTP/1.1\r\nHost: gw\r\nAuthorization: ${ALICE}\r\n${WEBSOCKET_HEADERS}\r\n`,
      { until: (reply) => reply.endsWith('hello /after') },
    );
    const slow = reply.indexOf('\r\n\r\nGET /slow  upgrade=undefined');
    const switched = reply.indexOf('HTTP/1.1 101 Switching Protocols\r\n');
    assert.ok(slow > 0 && switched > slow, reply);
    assert.ok(reply.endsWith('hello /after'), JSON.stringify(reply));
    assert.equal(closed, false);
  });

  it('answers a request pipelined before an upgrade request with a body first, then that one, as plain HTTP', async () => {
    const { reply } = await exchange(
      port,
      `GET /refusing/slow HTTP/1.1\r\nHost: gw\r\n\r\nPOST /refusing/b HTTP/1.1\r\nHost: gw\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 2\r\n\r\nhi`,
      { until: (reply) => reply.includes('POST /b hi upgrade=undefined') },
    );
    const slow = reply.indexOf('GET /slow  upgrade=undefined');
    const posted = reply.indexOf('POST /b hi upgrade=undefined');
    assert.ok(slow > 0 && posted > slow, reply);
  });

  it('logs a tunnel once it closes, as a 101 of the user, with how long it was open', async () => {
    const client = await connect(`${ws}/chat/logged`, { authorization: ALICE });
    await client.message(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    client.socket.close();
    await client.closed;
    const [line] = await running.log.waitForLines(1, (l) => l.path === '/chat/logged');
    assert.equal(line.status, 101);
    assert.equal(line.route, 'chat');
    assert.equal(line.user, 'alice');
    assert.equal(line.aborted, undefined);
    assert.ok((line.duration_ms as number) >= 100, String(line.duration_ms));
  });

  it('closes the tunnels still open when it stops, after the grace', async () => {
    const client = await connect(`${ws}/chat/last`, { authorization: ALICE });
    await client.message(1);
    const stopped = running.stop();
    assert.equal(await client.closed, 1006);
    await stopped;
  });
});
