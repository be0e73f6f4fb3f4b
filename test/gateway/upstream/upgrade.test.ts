/**
 * Requests asking for a protocol upgrade (WebSocket) that no route tunnels
 * (no `allow_upgrade`, or a server that does not hand upgrades over, as a
 * host app's): served as plain HTTP with the Upgrade ignored (RFC 9110 §7.8),
 * and the connection closed after the answer, never leaving the client
 * waiting. Tunnels are tested through a started Gatehouse
 * (test/gatehouse/upgrade-tunnel.test.ts).
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { createGateway, type Gateway } from '../../../src/gateway';
import { exchange, WEBSOCKET_HEADERS as WEBSOCKET } from '../../support/websocket';
import { close, listen } from '../../support/server';
import { configOf, mapping } from '../../support/records';
import { echoModule, registry } from '../../support/modules';
import { recordingUpstream, type Received } from '../../support/upstreams';

describe('gateway Upgrade requests', () => {
  let gateway: Gateway;
  let server: http.Server;
  let port: number;
  let upstream: Awaited<ReturnType<typeof recordingUpstream>>;
  let received: Received[];

  before(async () => {
    upstream = await recordingUpstream((req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      res.end(`plain ${req.url}`);
    });
    received = upstream.received;
    gateway = createGateway({
      modules: registry(echoModule('api')),
      config: configOf(mapping('/ws/', upstream.url, { name: 'ws' }), mapping('/api/', 'api', { name: 'api' })),
    });
    ({ server, port } = await listen(gateway.app.callback()));
  });

  beforeEach(() => {
    received.length = 0;
  });

  after(async () => {
    await close(server);
    await gateway.close();
    await close(upstream.server);
  });

  it("answers a WebSocket upgrade to a remote upstream with the upstream's plain answer, then closes", async () => {
    const { reply, closed } = await exchange(port, `GET /ws/chat HTTP/1.1\r\nHost: gw\r\n${WEBSOCKET}\r\n`);
    assert.match(reply, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(reply, /\r\nConnection: close\r\n/i);
    assert.ok(reply.endsWith('\r\n\r\nplain /chat'), reply);
    assert.ok(closed, 'the connection is closed after the answer');
    assert.equal(received.length, 1);
    assert.equal(received[0].headers.upgrade, undefined);
    assert.doesNotMatch(String(received[0].headers.connection), /upgrade/i);
  });

  it('does not leave a request sent right behind an upgrade request waiting: the connection closes after the first answer', async () => {
    const { reply, closed } = await exchange(
      port,
      `POST /ws/first HTTP/1.1\r\nHost: gw\r\n${WEBSOCKET}Content-Length: 5\r\n\r\nhelloGET /ws/second HTTP/1.1\r\nHost: gw\r\n\r\n`,
    );
    assert.ok(closed, `the connection is closed, not left open: ${reply}`);
    assert.equal(reply.match(/HTTP\/1\.1 /g)?.length, 1, reply);
    assert.ok(reply.endsWith('plain /first'), reply);
    assert.equal(received[0].body.toString(), 'hello');
  });

  it("passes on no HTTP2-Settings of an h2c upgrade, which the client named in Connection as one connection's", async () => {
    const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n';
    const remote = await exchange(port, `GET /ws/x HTTP/1.1\r\nHost: gw\r\n${h2c}\r\n`);
    assert.ok(remote.reply.endsWith('plain /x'), remote.reply);
    assert.equal(received[0].headers['http2-settings'], undefined);
    assert.equal(received[0].headers.upgrade, undefined);
    const module = await exchange(port, `GET /api/x HTTP/1.1\r\nHost: gw\r\n${h2c}\r\n`);
    assert.match(module.reply, /"path":"\/x"/);
    assert.doesNotMatch(module.reply, /http2-settings/);
  });

  it('answers an upgrade to an in-process module as a plain request', async () => {
    const { reply, closed } = await exchange(port, `GET /api/x HTTP/1.1\r\nHost: gw\r\n${WEBSOCKET}\r\n`);
    assert.match(reply, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(reply, /"path":"\/x"/);
    assert.ok(closed);
  });

  it('answers an upgrade on a path no Mapping holds with the 404 error body', async () => {
    const { reply, closed } = await exchange(port, `GET /nowhere HTTP/1.1\r\nHost: gw\r\n${WEBSOCKET}\r\n`);
    assert.match(reply, /^HTTP\/1\.1 404 Not Found\r\n/);
    assert.ok(reply.endsWith('{"code":404,"message":"404: Not Found"}'), reply);
    assert.ok(closed);
  });

  it('keeps the connection open after a request without Upgrade', async () => {
    const { reply, closed } = await exchange(port, 'GET /ws/x HTTP/1.1\r\nHost: gw\r\n\r\n', {
      until: (reply) => reply.endsWith('plain /x'),
    });
    assert.match(reply, /^HTTP\/1\.1 200 OK\r\n/);
    assert.equal(closed, false);
  });
});
