import assert from 'node:assert/strict';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { join } from 'node:path';
import { createAuthService, type AuthService } from '../../src/auth';
import { basic, quickHash, usersFolder } from '../support/credentials';
import { memoryLogger } from '../support/memory-logger';
import { NO_BOUND_MS } from '../support/polling';

describe('the auth service over HTTP', () => {
  const folder = usersFolder();
  let service: AuthService;
  let server: Server;
  before(() => {
    const file = folder.write('users.htpasswd', `alice:${quickHash('wonderland')}\n`);
    service = createAuthService({ maxWaitMs: NO_BOUND_MS, usersFile: file, logger: memoryLogger() });
    server = service.app.listen(0, '127.0.0.1');
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await service.close();
    folder.remove();
  });

  function expectUnauthorized(res: request.Response, detail: RegExp): void {
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], 'Basic realm="gatehouse"');
    assert.match(res.headers['content-type'], /^application\/json/);
    assert.equal(res.body.code, 401);
    assert.equal(res.body.message, '401: Unauthorized');
    assert.match(res.body.detail, detail);
    assert.equal(res.headers['x-travel-user'], undefined);
  }

  it('answers 200 with X-Travel-User and {user} on any path when the credentials match', async () => {
    const res = await request(server)
      .get('/v1/hotels/bookings/42?x=1')
      .set('Authorization', basic('alice', 'wonderland'));
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-travel-user'], 'alice');
    assert.deepEqual(res.body, { user: 'alice' });
  });

  for (const method of ['post', 'put', 'delete', 'patch', 'options'] as const) {
    it(`answers ${method.toUpperCase()} the same way`, async () => {
      const ok = await request(server)[method]('/anything').set('Authorization', basic('alice', 'wonderland'));
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['x-travel-user'], 'alice');
      const refused = await request(server)[method]('/anything');
      assert.equal(refused.status, 401);
    });
  }

  it('answers HEAD with the status and headers only', async () => {
    const res = await request(server).head('/').set('Authorization', basic('alice', 'wonderland'));
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-travel-user'], 'alice');
  });

  it('answers 401 to a wrong password', async () => {
    expectUnauthorized(await request(server).get('/').set('Authorization', basic('alice', 'Wonderland')), /wrong/);
  });

  it('answers 401 to an unknown user with the same detail as a wrong password', async () => {
    expectUnauthorized(await request(server).get('/').set('Authorization', basic('mallory', 'wonderland')), /wrong/);
  });

  const malformed: Array<[string, string | undefined, RegExp]> = [
    ['no Authorization header', undefined, /required/],
    ['another scheme', 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x', /Basic scheme/],
    ['Digest credentials', 'Digest username="alice", realm="gatehouse"', /Basic scheme/],
    ['the scheme alone', 'Basic', /base64/],
    ['bad base64', 'Basic !!!not-base64!!!', /base64/],
    ['base64 with bad padding', 'Basic YWxpY2U6d29uZGVybGFuZA=x=', /base64/],
    ['no colon', `Basic ${Buffer.from('alicewonderland').toString('base64')}`, /user:password/],
    ['an empty user', `Basic ${Buffer.from(':wonderland').toString('base64')}`, /empty user/],
    [
      'credentials that are not UTF-8',
      `Basic ${Buffer.from([0x61, 0x6c, 0x3a, 0xc3, 0x28]).toString('base64')}`,
      /UTF-8/,
    ],
    [
      'an oversized header (over 4 KiB)',
      `Basic ${Buffer.from(`alice:${'w'.repeat(4000)}`).toString('base64')}`,
      /too long/,
    ],
    ['Latin-1 bytes in the header itself', 'Basic \u00ff\u00fe', /base64/],
  ];
  for (const [what, header, detail] of malformed) {
    it(`answers 401, never 500, to ${what}`, async () => {
      const req = request(server).get('/v1/cars/x');
      if (header !== undefined) req.set('Authorization', header);
      expectUnauthorized(await req, detail);
    });
  }

  it('sends a UTF-8 user name in X-Travel-User as its UTF-8 bytes, and whole in the body', async () => {
    const utf8 = createAuthService({
      maxWaitMs: NO_BOUND_MS,
      usersFile: join(__dirname, 'fixtures', 'apache-utf8.htpasswd'),
      logger: memoryLogger(),
    });
    try {
      for (const [user, password] of [
        ['Łukasz', 'open sesame'],
        ['utf8ü', 'grüße'],
      ]) {
        const res = await request(utf8.app.callback()).get('/').set('Authorization', basic(user, password));
        assert.equal(res.status, 200, user);
        // Node reads header bytes as Latin-1: one character per byte.
        assert.equal(Buffer.from(res.headers['x-travel-user'], 'latin1').toString('utf8'), user);
        assert.deepEqual(res.body, { user });
      }
    } finally {
      await utf8.close();
    }
  });

  it('answers 401 to two Authorization headers, whichever comes first', async () => {
    const { port } = server.address() as AddressInfo;
    for (const pair of [
      [basic('alice', 'wonderland'), basic('bob', 'wrong')],
      [basic('bob', 'wrong'), basic('alice', 'wonderland')],
    ]) {
      const [status, body] = await new Promise<[number, string]>((resolve, reject) => {
        // Node sends an array as one header line per value.
        const req = httpRequest(
          { host: '127.0.0.1', port, path: '/x', headers: { authorization: pair as unknown as string } },
          (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve([res.statusCode!, text]));
          },
        );
        req.on('error', reject);
        req.end();
      });
      assert.equal(status, 401);
      assert.equal(JSON.parse(body).detail, 'the request has more than one Authorization header');
    }
  });

  it('writes the refusal in XML when the client asks for XML', async () => {
    const res = await request(server).get('/').set('Accept', 'application/xml');
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], 'Basic realm="gatehouse"');
    assert.match(res.headers['content-type'], /^application\/xml/);
    assert.match(res.text, /<code>401<\/code>/);
  });

  it('answers in JSON rather than 406 when Accept matches nothing', async () => {
    const res = await request(server)
      .get('/')
      .set('Accept', 'text/html')
      .set('Authorization', basic('alice', 'wonderland'));
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-travel-user'], 'alice');
    assert.deepEqual(JSON.parse(res.text), { user: 'alice' });
  });

  it('never echoes the credentials it was sent', async () => {
    const header = basic('alice', 'not-the-password');
    const res = await request(server).get('/').set('Authorization', header);
    assert.equal(res.status, 401);
    assert.ok(!res.text.includes('not-the-password'));
    assert.ok(!res.text.includes(header.slice(6)));
    assert.ok(!JSON.stringify(res.headers).includes(header.slice(6)));
  });
});
