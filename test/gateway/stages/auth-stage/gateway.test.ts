import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { basic } from '../../../support/credentials';
import { close, listenLocal } from '../../../support/server';
import { createGuardedGateway, type GuardedGateway, type Reached } from '../../../support/guarded-gateway';
import { GUARDED_PATH_SPELLINGS } from '../../../support/hostile-requests';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A request sent byte for byte as written: no client library tidies the path. */
function send(port: number, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the auth stage in the gateway', () => {
  let guarded: GuardedGateway;
  let reached: Reached[];
  let server: Server;
  let port: number;

  before(async () => {
    guarded = await createGuardedGateway();
    reached = guarded.reached;
    server = createServer(guarded.gateway.app.callback());
    port = Number((await listenLocal(server)).split(':')[1]);
  });
  beforeEach(() => {
    reached.length = 0;
  });
  after(async () => {
    await close(server);
    await guarded.close();
  });

  const spellings = GUARDED_PATH_SPELLINGS;
  it('refuses two Authorization headers with 401, even when the first holds good credentials', async () => {
    const res = await send(port, '/v1/hotels/', {
      Authorization: [basic('alice', 'wonderland'), basic('alice', 'wrong')] as unknown as string,
    });
    assert.equal(res.status, 401);
    assert.deepEqual(reached, []);
  });

  it('writes the 401 of the built-in auth service in the representation Accept chose, with its detail', async () => {
    const xml = await send(port, '/v1/hotels/', { Accept: 'application/xml', Authorization: 'Bearer abc' });
    assert.equal(xml.status, 401);
    assert.match(String(xml.headers['content-type']), /^application\/xml/);
    assert.match(String(xml.headers.vary), /Accept/);
    assert.equal(xml.headers['www-authenticate'], 'Basic realm="gatehouse"');
    assert.match(xml.body, /<code>401<\/code>/);
    assert.match(xml.body, /<detail>[^<]*Basic[^<]*<\/detail>/);
    const json = await send(port, '/v1/hotels/', { Authorization: 'Bearer abc' });
    assert.equal(json.status, 401);
    assert.match(String(json.headers['content-type']), /^application\/json/);
    assert.match(JSON.parse(json.body).detail, /Basic/);
    assert.deepEqual(reached, []);
  });

  for (const path of spellings) {
    it(`answers 401 or 400 to ${path} without credentials, and no backend sees it`, async () => {
      const res = await send(port, path, { 'X-Travel-User': 'alice' });
      assert.ok(res.status === 401 || res.status === 400, `status ${res.status}`);
      if (res.status === 401) assert.equal(res.headers['www-authenticate'], 'Basic realm="gatehouse"');
      assert.equal(JSON.parse(res.body).code, res.status);
      assert.deepEqual(reached, []);
    });
  }

  it('routes an odd spelling with credentials as the user they name', async () => {
    const res = await send(port, '/v1/hotels/%2e%2e/c%61rs/x', {
      Authorization: basic('alice', 'wonderland'),
      'X-Travel-User': 'mallory',
    });
    assert.equal(res.status, 200);
    assert.deepEqual(reached, [{ where: 'in-process', path: '/x', user: 'alice' }]);
  });

  it('carries the user to a remote backend, not the one the client claimed', async () => {
    const res = await send(port, '/remote/bookings', {
      Authorization: basic('alice', 'wonderland'),
      'X-Travel-User': 'mallory',
    });
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { path: '/bookings', user: 'alice' });
  });

  it('lets a bypass_auth mapping through without credentials', async () => {
    const res = await send(port, '/open/x');
    assert.equal(res.status, 200);
    assert.equal(reached.length, 1);
  });

  it('never lets a client name the user on a bypass_auth mapping', async () => {
    const res = await send(port, '/open/x', { 'X-Travel-User': 'alice' });
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { path: '/x', user: null });
  });
});
