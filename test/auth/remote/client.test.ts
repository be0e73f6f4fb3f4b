import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  createAuthService,
  createRemoteAuthClient,
  parseAuthAddress,
  RemoteAuthError,
  type AuthService,
} from '../../../src/auth';
import { basic } from '../../support/credentials';
import { memoryLogger } from '../../support/memory-logger';
import { NO_BOUND_MS } from '../../support/polling';

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
const close = (server: Server) => new Promise((resolve) => server.close(resolve));

describe('the remote auth client', () => {
  let service: AuthService;
  let server: Server;
  let address: string;
  before(async () => {
    // The demo users: alice / wonderland, bob / builder.
    service = createAuthService({
      maxWaitMs: NO_BOUND_MS,
      usersFile: join(__dirname, '../../../config/users.htpasswd'),
      logger: memoryLogger(),
    });
    server = createServer(service.app.callback());
    address = await listen(server);
  });
  after(async () => {
    await close(server);
    await service.close();
  });

  it('gets the same decisions over HTTP as in-process, for the demo users', async () => {
    const client = createRemoteAuthClient(address, { timeoutMs: NO_BOUND_MS });
    try {
      for (const [user, password] of [
        ['alice', 'wonderland'],
        ['bob', 'builder'],
      ]) {
        const decision = await client.authenticate({
          method: 'GET',
          url: '/v1/hotels',
          headers: { authorization: basic(user, password) },
        });
        assert.equal(decision.status, 200);
        assert.equal(decision.headers['x-travel-user'], user);
      }
      const refused = await client.authenticate({
        method: 'POST',
        url: '/x?y=1',
        headers: { authorization: basic('alice', 'builder') },
      });
      assert.equal(refused.status, 401);
      assert.equal(refused.headers['www-authenticate'], 'Basic realm="gatehouse"');
      assert.equal(JSON.parse(String(refused.body)).code, 401);
    } finally {
      await client.close();
    }
  });

  it('takes a URL with a path, and puts the path in front of every request', async () => {
    let seen = '';
    const recorder = createServer((req, res) => {
      seen = req.url ?? '';
      res.end();
    });
    const at = await listen(recorder);
    const client = createRemoteAuthClient(`http://${at}/auth/`, { timeoutMs: NO_BOUND_MS });
    try {
      await client.authenticate({ method: 'GET', url: '/v1/cars?x=1', headers: {} });
      assert.equal(seen, '/auth/v1/cars?x=1');
    } finally {
      await client.close();
      await close(recorder);
    }
  });

  it('passes on the Host it is given, and presents the service its own name in TLS, not that Host', async () => {
    let host: string | undefined;
    const plain = createServer((req, res) => {
      host = req.headers.host;
      res.end();
    });
    const plainAt = await listen(plain);
    const names: string[] = [];
    // No certificate: the handshake stops once the client has named the server it wants.
    const secure = createTlsServer({
      SNICallback: (name, done) => (names.push(name), done(new Error('no certificate here'))),
    });
    secure.on('tlsClientError', () => undefined);
    const securePort = (await listen(secure as unknown as Server)).split(':')[1];
    const clients = [
      createRemoteAuthClient(plainAt, { timeoutMs: NO_BOUND_MS }),
      createRemoteAuthClient(`https://localhost:${securePort}`, { timeoutMs: NO_BOUND_MS }),
    ];
    try {
      await clients[0].authenticate({ method: 'GET', url: '/', headers: { host: 'shop.example:8443' } });
      assert.equal(host, 'shop.example:8443');
      for (let i = 0; i < 2; i++) {
        await assert.rejects(
          clients[1].authenticate({ method: 'GET', url: '/', headers: { host: `tenant-${i}.example` } }),
          RemoteAuthError,
        );
      }
      assert.deepEqual(names, ['localhost', 'localhost']);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await close(plain);
      await close(secure as unknown as Server);
    }
  });

  it('rejects with a timeout when the service does not answer in time', async () => {
    const silent = createServer(() => undefined);
    const at = await listen(silent);
    const client = createRemoteAuthClient(at, { timeoutMs: 100 });
    try {
      await assert.rejects(
        client.authenticate({ method: 'GET', url: '/', headers: {} }),
        (err: unknown) => err instanceof RemoteAuthError && err.reason === 'timeout',
      );
    } finally {
      silent.closeAllConnections();
      await client.close();
      await close(silent);
    }
  });

  it('rejects with a timeout when the body of an answer is not in within the time, its headers were', async () => {
    const trickle = createServer((_req, res) => {
      res.writeHead(200, { 'x-travel-user': 'alice' });
      res.write('part');
    });
    const client = createRemoteAuthClient(await listen(trickle), { timeoutMs: 100 });
    try {
      await assert.rejects(
        client.authenticate({ method: 'GET', url: '/', headers: {} }),
        (err: unknown) => err instanceof RemoteAuthError && err.reason === 'timeout',
      );
    } finally {
      trickle.closeAllConnections();
      await client.close();
      await close(trickle);
    }
  });

  it('refuses an answer longer than maxBodyBytes as a bad answer, whether its length is said or not, and goes on asking', async () => {
    const long = createServer((req, res) => {
      if (req.url === '/said') res.writeHead(401, { 'content-length': 2048 }).end(Buffer.alloc(2048, 'x'));
      else if (req.url === '/unsaid') res.writeHead(401).end(Buffer.alloc(2048, 'x'));
      else res.writeHead(200, { 'x-travel-user': 'alice', 'content-length': 2 }).end('ok');
    });
    const client = createRemoteAuthClient(await listen(long), { timeoutMs: NO_BOUND_MS, maxBodyBytes: 1024 });
    try {
      for (const url of ['/said', '/unsaid']) {
        await assert.rejects(
          client.authenticate({ method: 'GET', url, headers: {} }),
          (err: unknown) =>
            err instanceof RemoteAuthError && err.reason === 'bad-answer' && err.message.includes('1024 bytes'),
        );
      }
      const answer = await client.authenticate({ method: 'GET', url: '/fine', headers: {} });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['x-travel-user'], 'alice');
      assert.equal(answer.body?.toString(), 'ok');
    } finally {
      long.closeAllConnections();
      await client.close();
      await close(long);
    }
  });

  it('answers a credential the service knows at once while more checks are waiting than the service queues', async () => {
    // As an auth service does under a flood of wrong passwords: each unknown
    // credential waits its turn (up to maxQueued 64 and a thread), a cached one is answered at once.
    const held: Array<() => void> = [];
    const slow = createServer((req, res) => {
      const answer = () => res.writeHead(req.headers.authorization === 'cached' ? 200 : 401).end();
      if (req.headers.authorization === 'cached') answer();
      else held.push(answer);
    });
    // No deadline ends a check here: the unknown ones are held until the known one is answered.
    const client = createRemoteAuthClient(await listen(slow), { timeoutMs: NO_BOUND_MS });
    try {
      const flood = Array.from({ length: 65 }, () =>
        client.authenticate({ method: 'GET', url: '/', headers: { authorization: 'wrong' } }),
      );
      const known = await client.authenticate({ method: 'GET', url: '/', headers: { authorization: 'cached' } });
      assert.equal(known.status, 200);
      for (const answer of held.splice(0)) answer();
      await Promise.all(flood);
    } finally {
      for (const answer of held.splice(0)) answer();
      await client.close();
      slow.closeAllConnections();
      await close(slow);
    }
  });

  it('rejects as unreachable when nothing listens', async () => {
    const gone = createServer();
    const at = await listen(gone);
    await close(gone);
    const client = createRemoteAuthClient(at, { timeoutMs: NO_BOUND_MS });
    try {
      await assert.rejects(
        client.authenticate({ method: 'GET', url: '/', headers: {} }),
        (err: unknown) => err instanceof RemoteAuthError && err.reason === 'unreachable',
      );
    } finally {
      await client.close();
    }
  });

  it('reads host:port, [v6]:port and http(s) URLs, and refuses other addresses', () => {
    assert.deepEqual(parseAuthAddress('auth.example:9001'), { origin: 'http://auth.example:9001', basePath: '' });
    assert.deepEqual(parseAuthAddress('[::1]:9001'), { origin: 'http://[::1]:9001', basePath: '' });
    assert.deepEqual(parseAuthAddress('https://auth.example/check'), {
      origin: 'https://auth.example',
      basePath: '/check',
    });
    assert.throws(() => parseAuthAddress('ftp://auth.example'), /only http and https/);
    assert.throws(() => parseAuthAddress('http://u:p@auth.example'), /no credentials/);
    assert.throws(() => parseAuthAddress('http://auth.example/?q=1'), /query/);
    assert.throws(() => parseAuthAddress('host:notaport'), /not host:port or a URL/);
  });

  it('refuses an address without a scheme whose port is missing, empty or 0, rather than dialling port 80', () => {
    for (const address of [
      'auth.example',
      'auth.example:',
      '127.0.0.1:0',
      'auth.example:65536',
      'auth/',
      'auth.example:/check',
    ]) {
      assert.throws(
        () => parseAuthAddress(address),
        new RegExp(`'${address}' is not host:port or a URL \\(with a port from 1 to 65535\\)`),
        address,
      );
    }
    assert.throws(() => parseAuthAddress('http://auth.example:0'), /port 0 is no port to connect to/);
    assert.deepEqual(parseAuthAddress('auth.example:9001/check'), {
      origin: 'http://auth.example:9001',
      basePath: '/check',
    });
  });
});
