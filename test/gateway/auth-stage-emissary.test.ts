import assert from 'node:assert/strict';
import type { Server, IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { createGateway, type Gateway } from '../../src/gateway';
import { createAuthStage } from '../../src/gateway/auth-stage';
import { captureLogger } from '../auth/support';
import { close, configOf, echoModule, listen, mapping, recordingUpstream, registry, send, type Echo, type Received } from './helpers';

type Respond = (req: IncomingMessage, res: ServerResponse, received: Received) => void;

/**
 * An AuthService record as an Emissary user writes it, served by a gateway on
 * a real port, in front of an auth service and a backend on real ports.
 */
describe('an AuthService written for Emissary, asking a remote auth service over HTTP', () => {
  let answer: Respond;
  let auth: Awaited<ReturnType<typeof recordingUpstream>>;
  let backend: Awaited<ReturnType<typeof recordingUpstream>>;
  let gateway: Gateway | undefined;
  let server: Server | undefined;
  let base = '';

  const start = async (fields: Record<string, unknown> = {}) => {
    gateway = createGateway({
      modules: registry(echoModule('echo')),
      stages: { auth: (record, modules) => createAuthStage(record, modules, { logger: captureLogger() }) },
      config: configOf(
        mapping('/remote', backend.url),
        mapping('/echo', 'echo'),
        { apiVersion: 'gateway/v1', kind: 'AuthService', name: 'authentication', auth_service: `127.0.0.1:${auth.port}`, ...fields },
      ),
    });
    const up = await listen(gateway.app.callback());
    server = up.server;
    base = up.url;
  };

  before(async () => {
    auth = await recordingUpstream((req, res, received) => answer(req, res, received));
    backend = await recordingUpstream((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('from the backend'));
  });
  beforeEach(() => {
    auth.received.length = 0;
    backend.received.length = 0;
    answer = (_req, res) => res.writeHead(200, { 'x-travel-user': 'alice' }).end();
  });
  afterEach(async () => {
    await close(server);
    await gateway?.close();
    server = undefined;
    gateway = undefined;
  });
  after(async () => {
    await close(auth.server);
    await close(backend.server);
  });

  it('tells the auth service the Host the client asked for, as Envoy does, and the backend its own', async () => {
    await start();
    const res = await send(base, '/remote/bookings', { headers: { Host: 'shop.example:8443' } });
    assert.equal(res.status, 200);
    assert.equal(auth.received[0].headers.host, 'shop.example:8443');
    assert.equal(auth.received[0].headers['x-forwarded-host'], 'shop.example:8443');
    assert.equal(backend.received[0].headers.host, `127.0.0.1:${backend.port}`);
  });

  it('sends allowed_request_headers by their exact names, besides the headers Emissary always sends', async () => {
    await start({ allowed_request_headers: ['X-Tenant'] });
    await send(base, '/remote/x', {
      headers: {
        Authorization: 'Bearer abc',
        Cookie: 'sid=1',
        From: 'ops@example.com',
        'Proxy-Authorization': 'Basic cHJveHk6cA==',
        'User-Agent': 'curl/8',
        'X-Tenant': 't1',
        'X-Tenant-Id': 'not named',
        'X-Other': 'not named',
      },
    });
    const got = auth.received[0].headers;
    assert.equal(got.authorization, 'Bearer abc');
    assert.equal(got.cookie, 'sid=1');
    assert.equal(got.from, 'ops@example.com');
    assert.equal(got['proxy-authorization'], 'Basic cHJveHk6cA==');
    assert.equal(got['user-agent'], 'curl/8');
    assert.equal(got['x-tenant'], 't1');
    assert.match(String(got['x-forwarded-for']), /127\.0\.0\.1$/);
    assert.equal(got['x-forwarded-proto'], 'http');
    assert.equal(got['x-tenant-id'], undefined, 'a name is not a prefix');
    assert.equal(got['x-other'], undefined);
  });

  for (const prefix of ['/extauth', '/extauth/']) {
    it(`asks on path_prefix ${prefix} + the normalised path, with one slash between them and the query as the client wrote it`, async () => {
      await start({ path_prefix: prefix });
      const res = await send(base, '/remote/./a/../b%7e/%3a?q=%2F&x=a+b');
      assert.equal(res.status, 200);
      assert.equal(auth.received[0].url, '/extauth/remote/b~/%3A?q=%2F&x=a+b');
      assert.equal(backend.received[0].url, '/b~/%3A?q=%2F&x=a+b');
    });
  }

  it("puts the Authorization of a 200 on the routed request in place of the client's", async () => {
    answer = (_req, res) => res.writeHead(200, { authorization: 'Bearer token-for-alice', 'x-travel-user': 'alice' }).end();
    await start();
    await send(base, '/remote/x', { headers: { Authorization: 'Basic YWxpY2U6d29uZGVybGFuZA==' } });
    assert.equal(auth.received[0].headers.authorization, 'Basic YWxpY2U6d29uZGVybGFuZA==');
    const raw = backend.received[0].rawHeaders.filter((_v, i, all) => i % 2 === 1 && all[i - 1].toLowerCase() === 'authorization');
    assert.deepEqual(raw, ['Bearer token-for-alice']);
    assert.equal(backend.received[0].headers['x-travel-user'], 'alice');

    const echoed = (await send(base, '/echo/x', { headers: { Authorization: 'Basic YWxpY2U6d29uZGVybGFuZA==' } })).json() as Echo;
    assert.equal(echoed.headers.authorization, 'Bearer token-for-alice');
  });

  it("keeps the client's Authorization on the routed request when the 200 sets none", async () => {
    await start();
    await send(base, '/remote/x', { headers: { Authorization: 'Basic YWxpY2U6d29uZGVybGFuZA==' } });
    assert.equal(backend.received[0].headers.authorization, 'Basic YWxpY2U6d29uZGVybGFuZA==');
  });

  it('asks with the client credentials when allowed_authorization_headers names Authorization or a header it also sends', async () => {
    answer = (req, res) => {
      const ok = req.headers.authorization === 'Basic YWxpY2U6d29uZGVybGFuZA==' && req.headers['x-session'] === 's1';
      res.writeHead(ok ? 200 : 401, ok && req.url!.includes('vouch') ? { 'x-session': 'checked' } : {}).end();
    };
    await start({ allowed_authorization_headers: ['Authorization', 'X-Session', 'X-Travel-User'], allowed_request_headers: ['X-Session'] });
    const headers = { Authorization: 'Basic YWxpY2U6d29uZGVybGFuZA==', 'X-Session': 's1' };
    const vouched = await send(base, '/remote/vouch', { headers });
    assert.equal(vouched.status, 200);
    assert.equal(backend.received[0].headers['x-session'], 'checked');
    assert.equal(backend.received[0].headers.authorization, 'Basic YWxpY2U6d29uZGVybGFuZA==');
    const silent = await send(base, '/remote/quiet', { headers });
    assert.equal(silent.status, 200);
    assert.equal(backend.received[1].headers['x-session'], undefined, "the client's own never reaches the backend");
  });

  it('never shows the auth service a client-sent X-Travel-User, even when allowed_request_headers names it', async () => {
    await start({ allowed_request_headers: ['X-Travel-User'] });
    await send(base, '/remote/x', { headers: { 'X-Travel-User': 'mallory' } });
    assert.equal(auth.received[0].headers['x-travel-user'], undefined);
    assert.equal(backend.received[0].headers['x-travel-user'], 'alice');
  });

  it('passes a 407 on with its Proxy-Authenticate, and the Authorization Emissary returns with a refusal', async () => {
    answer = (_req, res) =>
      res
        .writeHead(407, { 'proxy-authenticate': 'Basic realm="proxy"', authorization: 'Bearer hint', 'content-type': 'text/plain', 'x-internal': 'no' })
        .end('proxy credentials needed');
    await start();
    const res = await send(base, '/remote/x');
    assert.equal(res.status, 407);
    assert.equal(res.headers['proxy-authenticate'], 'Basic realm="proxy"');
    assert.equal(res.headers.authorization, 'Bearer hint');
    assert.equal(res.headers['x-internal'], undefined);
    assert.equal(res.text, 'proxy credentials needed');
    assert.equal(backend.received.length, 0);
  });

  it("adds add_auth_headers to the check request over the client's, and l5d-dst-override with add_linkerd_headers", async () => {
    await start({ add_auth_headers: { 'X-Auth-Key': 'k1', 'User-Agent': 'gatehouse', Host: 'auth.internal' }, add_linkerd_headers: true });
    await send(base, '/remote/x', { headers: { 'User-Agent': 'curl/8', 'X-Auth-Key': 'forged', Host: 'shop.example' } });
    const got = auth.received[0].headers;
    assert.equal(got['x-auth-key'], 'k1');
    assert.equal(got.host, 'auth.internal');
    assert.equal(got['x-forwarded-host'], 'shop.example');
    assert.equal(got['user-agent'], 'gatehouse');
    assert.equal(got['l5d-dst-override'], `127.0.0.1:${auth.port}`);
    assert.equal(backend.received[0].headers['user-agent'], 'curl/8', 'the routed request is the client’s');
    assert.equal(backend.received[0].headers['l5d-dst-override'], undefined);
  });

  const passedOn: Array<[number, Record<string, string>, string]> = [
    [301, { location: 'https://login.example/' }, ''],
    [307, { location: '/login', 'content-type': 'text/html' }, '<a href="/login">log in</a>'],
    [204, {}, ''],
    [418, { 'content-type': 'text/plain' }, 'short and stout'],
  ];
  for (const [status, headers, body] of passedOn) {
    it(`passes a ${status} on to the client as the auth service wrote it`, async () => {
      answer = (_req, res) => res.writeHead(status, headers).end(body);
      await start();
      const res = await send(base, '/remote/x');
      assert.equal(res.status, status);
      assert.equal(res.text, body);
      if (headers.location) assert.equal(res.headers.location, headers.location);
      assert.equal(backend.received.length, 0);
    });
  }

  it('lets a 200 through whatever body it carries, and the client sees the backend only', async () => {
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain', 'x-travel-user': 'alice' }).end('welcome, alice');
    await start();
    const res = await send(base, '/remote/x');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'from the backend');
    assert.equal(backend.received.length, 1);
  });

  describe('with tls', () => {
    let tcp: TcpServer;
    let firstBytes: Buffer[] = [];
    before(async () => {
      tcp = createTcpServer((socket) => socket.once('data', (chunk: Buffer) => (firstBytes.push(chunk), socket.destroy())));
      await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    });
    after(() => new Promise<void>((resolve) => tcp.close(() => resolve())));

    it('speaks TLS to a host:port auth service with tls: true', async () => {
      firstBytes = [];
      const port = (tcp.address() as { port: number }).port;
      await start({ auth_service: `127.0.0.1:${port}`, tls: true });
      const res = await send(base, '/remote/x');
      assert.equal(res.status, 403, 'the handshake fails: no certificate here');
      assert.equal(firstBytes[0][0], 0x16, 'a TLS handshake record');
      assert.equal(backend.received.length, 0);
    });
  });
});
