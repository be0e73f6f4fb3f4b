/**
 * A whole Gatehouse (the demo config, with a CORS policy and a remote
 * Mapping) answering HTTP/2 clients as it answers HTTP/1.1 ones: auth, rate
 * limits and their headers, CORS, negotiated error bodies, the built-in
 * modules, a remote upstream spoken to over HTTP/1.1, diag, the metrics and
 * the access log, which say which protocol.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { ClientHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { h2Connect, h2Request } from '../support/http2-client';
import { copyConfig, type TempConfig } from '../support/config-folder';
import { ALICE } from '../support/credentials';
import { startGatehouse, type Running } from '../support/gatehouse';

const APP = 'https://app.example';

function recordsYaml(upstream: string): string {
  return `apiVersion: gateway/v1
kind: Module
name: gateway
config:
  cors:
    origins: [${APP}]
    headers: [Authorization]
---
apiVersion: gateway/v1
kind: Mapping
name: remote
prefix: /remote/
service: ${upstream}
bypass_auth: true
`;
}

describe('gatehouse over HTTP/2', function () {
  let config: TempConfig;
  let upstream: Server;
  let running: Running;
  let session: ClientHttp2Session;
  const received: { url: string; headers: Record<string, unknown> }[] = [];

  before(async () => {
    upstream = createServer((req, res) => {
      received.push({ url: req.url!, headers: req.headers });
      // What an HTTP/1.1 upstream says of its own connection, none of which HTTP/2 may carry.
      res.writeHead(200, {
        Connection: 'keep-alive, X-Hop',
        'Keep-Alive': 'timeout=5',
        'X-Hop': 'for this connection only',
        'Proxy-Connection': 'keep-alive',
        'X-Kept': 'yes',
        'HTTP2-Settings': 'AAMAAABkAAQAAP__',
        'Content-Type': 'text/plain',
      });
      res.write('streamed ');
      setImmediate(() => res.end('answer'));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    config = copyConfig();
    config.write('h2.yaml', recordsYaml(`127.0.0.1:${(upstream.address() as AddressInfo).port}`));
    running = await startGatehouse({ configDir: config.dir });
    session = await h2Connect(running.url);
  });
  after(async () => {
    session?.close();
    await running?.stop();
    config?.remove();
    upstream?.closeAllConnections();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  it('serves the versioned API, its URLs made from the :authority', async () => {
    const res = await h2Request(session, '/v1/messages/1');
    assert.equal(res.status, 200);
    assert.equal(res.json().url, `${running.url}/v1/messages/1`);
    assert.match(String(res.headers.vary), /Accept/);
  });

  it('asks for credentials, and serves the user they name with the rate-limit headers', async () => {
    const refused = await h2Request(session, '/v1/hotels');
    assert.equal(refused.status, 401);
    assert.equal(refused.headers['www-authenticate'], 'Basic realm="gatehouse"');
    assert.equal(refused.json().code, 401);
    const served = await h2Request(session, '/v1/hotels', { headers: { authorization: ALICE } });
    assert.equal(served.status, 200);
    assert.match(String(served.headers.ratelimit), /^"per-user";r=\d+;t=\d+$/);
  });

  it('answers 429 past a limit, with Retry-After and the RateLimit headers', async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) {
      const headers = { authorization: ALICE, 'x-gateway-test-allow': 'h2-test' };
      answers.push(await h2Request(session, '/v1/hotels', { headers }));
    }
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 429],
    );
    const last = answers[3];
    assert.ok(Number(last.headers['retry-after']) > 0);
    assert.match(String(last.headers['ratelimit-policy']), /"test-allow";q=3;w=60/);
    assert.equal(last.json().code, 429);
  });

  it('writes an error in the representation Accept chose', async () => {
    const res = await h2Request(session, '/v1/messages/99', { headers: { accept: 'application/xml' } });
    assert.equal(res.status, 404);
    assert.match(String(res.headers['content-type']), /^application\/xml/);
    assert.match(res.text, /<code>404<\/code>/);
  });

  it('answers a CORS preflight without credentials', async () => {
    const res = await h2Request(session, '/v1/hotels/bookings/', {
      method: 'OPTIONS',
      headers: {
        origin: APP,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization',
      },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], APP);
    assert.equal(res.headers['www-authenticate'], undefined);
  });

  it('books through the built-in booking module', async () => {
    const res = await h2Request(session, '/v1/hotels/bookings/', {
      method: 'POST',
      headers: { authorization: ALICE, 'content-type': 'application/json' },
      body: JSON.stringify({ hotel_id: 'adde63cf-2901-4f62-871e-7fdca6395110', check_in: '2030-12-20', nights: 2 }),
    });
    assert.equal(res.status, 201);
    assert.equal(res.json().status, 'confirmed');
    assert.match(String(res.headers.location), /\/v1\/hotels\/bookings\/[0-9a-f-]{36}$/);
  });

  it("streams a remote upstream's answer without the headers of its HTTP/1.1 connection", async () => {
    const res = await h2Request(session, '/remote/x?y=1');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'streamed answer');
    assert.equal(res.headers['x-kept'], 'yes');
    for (const name of ['connection', 'keep-alive', 'x-hop', 'proxy-connection', 'transfer-encoding', 'http2-settings'])
      assert.equal(res.headers[name], undefined, name);
    const asked = received.at(-1)!;
    assert.equal(asked.url, '/x?y=1');
    assert.equal(asked.headers['x-forwarded-proto'], 'http');
    assert.equal(asked.headers['x-forwarded-host'], new URL(running.url).host);
  });

  it('shows diag, and counts requests in the metrics by protocol', async () => {
    const diag = await h2Request(session, '/gateway/v0/diag/?json=true', { headers: { authorization: ALICE } });
    assert.equal(diag.status, 200);
    assert.match(String(diag.headers['content-type']), /^application\/json/);
    assert.match(diag.text, /"api-v1"/);
    const metrics = await h2Request(session, '/gateway/v0/metrics');
    assert.match(
      metrics.text,
      /gatehouse_http_requests_total\{route="api-v1",method="GET",status="200",protocol="HTTP\/2"\} \d+/,
    );
  });

  it('writes the protocol in the access log', async () => {
    await h2Request(session, '/v1/messages/2');
    const line = running.log.lines.findLast((l) => l.path === '/v1/messages/2')!;
    assert.equal(line.protocol, 'HTTP/2');
  });
});
