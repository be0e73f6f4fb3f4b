import assert from 'node:assert/strict';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { send } from '../../../support/client';
import { type Echo } from '../../../support/modules';
import { useRemoteAuthRig } from '../../../support/remote-auth-rig';

/**
 * An AuthService record as an Emissary user writes it, served by a gateway on
 * a real port, in front of an auth service and a backend on real ports.
 */
describe('an AuthService written for Emissary, asking a remote auth service over HTTP', () => {
  const rig = useRemoteAuthRig((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/plain' }).end('from the backend'),
  );

  it('tells the auth service the Host the client asked for, as Envoy does, and the backend its own', async () => {
    await rig.start();
    const res = await send(rig.base, '/remote/bookings', { headers: { Host: 'shop.example:8443' } });
    assert.equal(res.status, 200);
    assert.equal(rig.auth.received[0].headers.host, 'shop.example:8443');
    assert.equal(rig.auth.received[0].headers['x-forwarded-host'], 'shop.example:8443');
    assert.equal(rig.backend.received[0].headers.host, `127.0.0.1:${rig.backend.port}`);
  });

  it('sends allowed_request_headers by their exact names, besides the headers Emissary always sends', async () => {
    await rig.start({ allowed_request_headers: ['X-Tenant'] });
    await send(rig.base, '/remote/x', {
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
    const got = rig.auth.received[0].headers;
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
      await rig.start({ path_prefix: prefix });
      const res = await send(rig.base, '/remote/./a/../b%7e/%3a?q=%2F&x=a+b');
      assert.equal(res.status, 200);
      assert.equal(rig.auth.received[0].url, '/extauth/remote/b~/%3A?q=%2F&x=a+b');
      assert.equal(rig.backend.received[0].url, '/b~/%3A?q=%2F&x=a+b');
    });
  }

  it("puts the Authorization of a 200 on the routed request in place of the client's", async () => {
    rig.answer = (_req, res) =>
      res.writeHead(200, { authorization: 'Bearer token-for-alice', 'x-travel-user': 'alice' }).end();
    await rig.start();
    await send(rig.base, '/remote/x', { headers: { Authorization: 'Basic YWxpY2U6d29uZGVybGFuZA==' } });
    assert.equal(rig.auth.received[0].headers.authorization, 'Basic YWxpY2U6d29uZGVybGFuZA==');
    const raw = rig.backend.received[0].rawHeaders.filter(
      (_v, i, all) => i % 2 === 1 && all[i - 1].toLowerCase() === 'authorization',
    );
    assert.deepEqual(raw, ['Bearer token-for-alice']);
    assert.equal(rig.backend.received[0].headers['x-travel-user'], 'alice');

    const echoed = (
      await send(rig.base, '/echo/x', { headers: { Authorization: 'Basic YWxpY2U6d29uZGVybGFuZA==' } })
    ).json() as Echo;
    assert.equal(echoed.headers.authorization, 'Bearer token-for-alice');
  });

  it("keeps the client's Authorization on the routed request when the 200 sets none", async () => {
    await rig.start();
    await send(rig.base, '/remote/x', { headers: { Authorization: 'Basic YWxpY2U6d29uZGVybGFuZA==' } });
    assert.equal(rig.backend.received[0].headers.authorization, 'Basic YWxpY2U6d29uZGVybGFuZA==');
  });

  it('asks with the client credentials when allowed_authorization_headers names Authorization or a header it also sends', async () => {
    rig.answer = (req, res) => {
      const ok = req.headers.authorization === 'Basic YWxpY2U6d29uZGVybGFuZA==' && req.headers['x-session'] === 's1';
      res.writeHead(ok ? 200 : 401, ok && req.url!.includes('vouch') ? { 'x-session': 'checked' } : {}).end();
    };
    await rig.start({
      allowed_authorization_headers: ['Authorization', 'X-Session', 'X-Travel-User'],
      allowed_request_headers: ['X-Session'],
    });
    const headers = { Authorization: 'Basic YWxpY2U6d29uZGVybGFuZA==', 'X-Session': 's1' };
    const vouched = await send(rig.base, '/remote/vouch', { headers });
    assert.equal(vouched.status, 200);
    assert.equal(rig.backend.received[0].headers['x-session'], 'checked');
    assert.equal(rig.backend.received[0].headers.authorization, 'Basic YWxpY2U6d29uZGVybGFuZA==');
    const silent = await send(rig.base, '/remote/quiet', { headers });
    assert.equal(silent.status, 200);
    assert.equal(rig.backend.received[1].headers['x-session'], undefined, "the client's own never reaches the backend");
  });

  it('never shows the auth service a client-sent X-Travel-User, even when allowed_request_headers names it', async () => {
    await rig.start({ allowed_request_headers: ['X-Travel-User'] });
    await send(rig.base, '/remote/x', { headers: { 'X-Travel-User': 'mallory' } });
    assert.equal(rig.auth.received[0].headers['x-travel-user'], undefined);
    assert.equal(rig.backend.received[0].headers['x-travel-user'], 'alice');
  });

  it('passes a 407 on with its Proxy-Authenticate, and the Authorization Emissary returns with a refusal', async () => {
    rig.answer = (_req, res) =>
      res
        .writeHead(407, {
          'proxy-authenticate': 'Basic realm="proxy"',
          authorization: 'Bearer hint',
          'content-type': 'text/plain',
          'x-internal': 'no',
        })
        .end('proxy credentials needed');
    await rig.start();
    const res = await send(rig.base, '/remote/x');
    assert.equal(res.status, 407);
    assert.equal(res.headers['proxy-authenticate'], 'Basic realm="proxy"');
    assert.equal(res.headers.authorization, 'Bearer hint');
    assert.equal(res.headers['x-internal'], undefined);
    assert.equal(res.text, 'proxy credentials needed');
    assert.equal(rig.backend.received.length, 0);
  });

  it('gives the client each Set-Cookie of a refusal without a body as its own header, with the error body', async () => {
    rig.answer = (_req, res) =>
      res
        .writeHead(401, {
          'www-authenticate': 'Bearer',
          'set-cookie': ['session=; Max-Age=0; HttpOnly', 'csrf=; Max-Age=0'],
        })
        .end();
    await rig.start();
    const res = await send(rig.base, '/remote/x');
    assert.equal(res.status, 401);
    assert.deepEqual(res.headers['set-cookie'], ['session=; Max-Age=0; HttpOnly', 'csrf=; Max-Age=0']);
    assert.equal(res.headers['www-authenticate'], 'Bearer');
    assert.deepEqual(res.json(), { code: 401, message: '401: Unauthorized' });
    assert.equal(rig.backend.received.length, 0);
  });

  it('gives a HEAD request each Set-Cookie of the refusal, which answers it without a body', async () => {
    rig.answer = (_req, res) =>
      res
        .writeHead(401, { 'content-type': 'text/plain', 'set-cookie': ['a=1; HttpOnly', 'b=2'] })
        .end(_req.method === 'HEAD' ? undefined : 'no');
    await rig.start();
    const res = await send(rig.base, '/remote/x', { method: 'HEAD' });
    assert.equal(res.status, 401);
    assert.deepEqual(res.headers['set-cookie'], ['a=1; HttpOnly', 'b=2']);
  });

  it("keeps the client's Content-Type on the routed request when allowed_authorization_headers names it, and passes the refusal's on", async () => {
    rig.answer = (req, res) =>
      req.url!.includes('deny')
        ? res.writeHead(403, { 'content-type': 'text/html' }).end('<p>log in first</p>')
        : res.writeHead(200, { 'content-type': 'text/plain', 'x-travel-user': 'alice' }).end('ok');
    await rig.start({ allowed_authorization_headers: ['x-travel-user', 'content-type'] });
    const res = await send(rig.base, '/remote/bookings', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"nights":2}',
    });
    assert.equal(res.status, 200);
    const got = rig.backend.received[0];
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['x-travel-user'], 'alice');
    assert.equal(got.body.toString(), '{"nights":2}');
    const refused = await send(rig.base, '/remote/deny');
    assert.equal(refused.status, 403);
    assert.equal(refused.headers['content-type'], 'text/html');
    assert.equal(refused.text, '<p>log in first</p>');
  });

  it("gives a refusal without a body the gateway's JSON error body, never the Content-Encoding of a body it did not have", async () => {
    rig.answer = (_req, res) => res.writeHead(401, { 'content-encoding': 'gzip', 'www-authenticate': 'Bearer' }).end();
    await rig.start({ allowed_authorization_headers: ['x-travel-user', 'content-encoding'] });
    const res = await send(rig.base, '/remote/x');
    assert.equal(res.status, 401);
    assert.equal(res.headers['content-encoding'], undefined);
    assert.deepEqual(res.json(), { code: 401, message: '401: Unauthorized' });
  });

  it('never takes the framing, the connection headers or the Host of the routed request from the auth service, whatever allowed_authorization_headers names', async () => {
    const own = ['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade', 'host'];
    rig.answer = (req, res) =>
      req.url!.includes('deny')
        ? res
            .writeHead(401, { 'content-type': 'text/plain', 'keep-alive': 'timeout=999', trailer: 'x-sum' })
            .end('refused')
        : res
            .writeHead(200, { 'x-travel-user': 'alice', host: 'auth.internal', 'keep-alive': 'timeout=999' })
            .end('ok');
    await rig.start({ allowed_authorization_headers: ['x-travel-user', ...own] });
    const res = await send(rig.base, '/remote/bookings', {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: 'a body of 20 bytes..',
    });
    assert.equal(res.status, 200);
    const got = rig.backend.received[0];
    assert.equal(got.body.toString(), 'a body of 20 bytes..');
    assert.equal(got.headers['content-length'], '20');
    assert.equal(got.headers.host, `127.0.0.1:${rig.backend.port}`);
    assert.equal(got.headers['keep-alive'], undefined);
    assert.equal(got.headers['x-travel-user'], 'alice');
    const refused = await send(rig.base, '/remote/deny');
    assert.equal(refused.status, 401);
    assert.equal(refused.text, 'refused');
    assert.equal(refused.headers['keep-alive'], undefined);
    assert.equal(refused.headers.trailer, undefined);
  });

  it("adds add_auth_headers to the check request over the client's, and l5d-dst-override with add_linkerd_headers", async () => {
    await rig.start({
      add_auth_headers: { 'X-Auth-Key': 'k1', 'User-Agent': 'gatehouse', Host: 'auth.internal' },
      add_linkerd_headers: true,
    });
    await send(rig.base, '/remote/x', {
      headers: { 'User-Agent': 'curl/8', 'X-Auth-Key': 'forged', Host: 'shop.example' },
    });
    const got = rig.auth.received[0].headers;
    assert.equal(got['x-auth-key'], 'k1');
    assert.equal(got.host, 'auth.internal');
    assert.equal(got['x-forwarded-host'], 'shop.example');
    assert.equal(got['user-agent'], 'gatehouse');
    assert.equal(got['l5d-dst-override'], `127.0.0.1:${rig.auth.port}`);
    assert.equal(rig.backend.received[0].headers['user-agent'], 'curl/8', 'the routed request is the client’s');
    assert.equal(rig.backend.received[0].headers['l5d-dst-override'], undefined);
  });

  const passedOn: Array<[number, Record<string, string>, string]> = [
    [301, { location: 'https://login.example/' }, ''],
    [307, { location: '/login', 'content-type': 'text/html' }, '<a href="/login">log in</a>'],
    [204, {}, ''],
    [418, { 'content-type': 'text/plain' }, 'short and stout'],
  ];
  for (const [status, headers, body] of passedOn) {
    it(`passes a ${status} on to the client as the auth service wrote it`, async () => {
      rig.answer = (_req, res) => res.writeHead(status, headers).end(body);
      await rig.start();
      const res = await send(rig.base, '/remote/x');
      assert.equal(res.status, status);
      assert.equal(res.text, body);
      if (headers.location) assert.equal(res.headers.location, headers.location);
      assert.equal(rig.backend.received.length, 0);
    });
  }

  it('lets a 200 through whatever body it carries, and the client sees the backend only', async () => {
    rig.answer = (_req, res) =>
      res.writeHead(200, { 'content-type': 'text/plain', 'x-travel-user': 'alice' }).end('welcome, alice');
    await rig.start();
    const res = await send(rig.base, '/remote/x');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'from the backend');
    assert.equal(rig.backend.received.length, 1);
  });

  describe('with tls', () => {
    let tcp: TcpServer;
    let firstBytes: Buffer[] = [];
    before(async () => {
      tcp = createTcpServer((socket) =>
        socket.once('data', (chunk: Buffer) => (firstBytes.push(chunk), socket.destroy())),
      );
      await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    });
    after(() => new Promise<void>((resolve) => tcp.close(() => resolve())));

    it('speaks TLS to a host:port auth service with tls: true', async () => {
      firstBytes = [];
      const port = (tcp.address() as { port: number }).port;
      await rig.start({ auth_service: `127.0.0.1:${port}`, tls: true });
      const res = await send(rig.base, '/remote/x');
      assert.equal(res.status, 403, 'the handshake fails: no certificate here');
      assert.equal(firstBytes[0][0], 0x16, 'a TLS handshake record');
      assert.equal(rig.backend.received.length, 0);
    });
  });
});
