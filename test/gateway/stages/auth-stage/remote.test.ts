import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import request from 'supertest';
import { createAuthService, type AuthService } from '../../../../src/auth';
import { createAuthStage } from '../../../../src/gateway/stages/auth-stage';
import type { AuthServiceRecord } from '../../../../src/gateway/config/schema';
import type { Stage } from '../../../../src/gateway/stages/stage';
import { authRecord, mappingRecord } from '../../../support/records';
import { basic, quickHash, usersFolder } from '../../../support/credentials';
import { memoryLogger } from '../../../support/memory-logger';
import { close, listenLocal } from '../../../support/server';
import { stageApp } from '../../../support/stage-app';
import { NO_BOUND_MS } from '../../../support/polling';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bodyBytes: number;
}

/** A real auth service on a real port that records what it receives and answers as told. */
class RecordingAuthService {
  readonly received: Received[] = [];
  answer: (res: ServerResponse) => void = (res) => res.writeHead(200, { 'x-travel-user': 'remote-user' }).end();
  readonly server: Server = createServer((req, res) => {
    let bodyBytes = 0;
    req.on('data', (chunk: Buffer) => (bodyBytes += chunk.length));
    req.on('end', () => {
      this.received.push({ method: req.method!, url: req.url!, headers: req.headers, bodyBytes });
      this.answer(res);
    });
  });
  address = '';
  async start(): Promise<this> {
    this.address = await listenLocal(this.server);
    return this;
  }
  stop(): Promise<void> {
    return close(this.server);
  }
}

describe('the auth stage, asking a remote auth service over HTTP', () => {
  const remote = new RecordingAuthService();
  const stages: Stage[] = [];
  let log = memoryLogger();
  let clock = 0;
  const stageFor = (fields: Partial<Record<keyof AuthServiceRecord, unknown>> = {}, address = remote.address) => {
    const stage = createAuthStage(
      authRecord({
        auth_service: address,
        path_prefix: '/extauth',
        allowed_request_headers: ['x-request-id'],
        allowed_authorization_headers: ['x-travel-user', 'x-travel-tier'],
        ...fields,
      }),
      new Map(),
      { logger: log, now: () => clock },
    );
    stages.push(stage);
    return stage;
  };
  before(() => remote.start());
  beforeEach(() => {
    remote.received.length = 0;
    log = memoryLogger();
  });
  afterEach(async () => {
    await Promise.all(stages.splice(0).map(async (s) => s.close?.()));
  });
  after(() => remote.stop());

  it('sends the method, path_prefix + path + query and the allowed headers, without a body', async () => {
    const { app } = stageApp(stageFor(), mappingRecord());
    const res = await request(app.callback())
      .post('/v1/hotels/bookings/?hotel=7&x=%20y')
      .set('Authorization', basic('alice', 'wonderland'))
      .set('Cookie', 'sid=abc')
      .set('User-Agent', 'gatehouse-tests')
      .set('Accept', 'application/xml')
      .set('X-Request-Id', 'req-9')
      .set('X-Not-Allowed', 'private')
      .set('X-Travel-User', 'spoofed')
      .set('X-Forwarded-For', '203.0.113.9')
      .send({ hotel_id: 'h' });
    assert.equal(res.status, 200);
    assert.equal(remote.received.length, 1);
    const [got] = remote.received;
    assert.equal(got.method, 'POST');
    assert.equal(got.url, '/extauth/v1/hotels/bookings/?hotel=7&x=%20y');
    assert.equal(got.bodyBytes, 0);
    assert.equal(got.headers['content-length'], '0');
    assert.equal(got.headers.authorization, basic('alice', 'wonderland'));
    assert.equal(got.headers.cookie, 'sid=abc');
    assert.equal(got.headers['user-agent'], 'gatehouse-tests');
    assert.equal(
      got.headers.accept,
      'application/xml',
      'so that a refusal can be written in a representation the client reads',
    );
    assert.equal(got.headers['x-request-id'], 'req-9');
    assert.match(String(got.headers['x-forwarded-for']), /^203\.0\.113\.9, (::ffff:)?127\.0\.0\.1$/);
    assert.equal(got.headers['x-forwarded-proto'], 'http');
    assert.ok(got.headers['x-forwarded-host']);
    for (const absent of ['x-not-allowed', 'x-travel-user', 'content-type', 'transfer-encoding']) {
      assert.equal(got.headers[absent], undefined, `${absent} is not sent`);
    }
  });

  it("sends the gateway's own Forwarded when allowed_request_headers names it, never the client's", async () => {
    const { app } = stageApp(stageFor({ allowed_request_headers: ['forwarded'] }), mappingRecord());
    const res = await request(app.callback())
      .get('/v1/hotels/')
      .set('Host', 'shop.example')
      .set('Authorization', basic('alice', 'wonderland'))
      .set('Forwarded', 'for=198.51.100.7;host=admin.internal;proto=https');
    assert.equal(res.status, 200);
    assert.equal(remote.received[0].headers.forwarded, 'for=127.0.0.1;host=shop.example;proto=http');
    assert.equal(remote.received[0].headers['x-forwarded-for'], '127.0.0.1');
  });

  it('sends no Forwarded at all when allowed_request_headers does not name it', async () => {
    const { app } = stageApp(stageFor(), mappingRecord());
    await request(app.callback())
      .get('/v1/hotels/')
      .set('Authorization', basic('alice', 'wonderland'))
      .set('Forwarded', 'for=198.51.100.7')
      .expect(200);
    assert.equal(remote.received[0].headers.forwarded, undefined);
  });

  it('copies only the allowed authorization headers of a 200 onto the routed request', async () => {
    remote.answer = (res) =>
      res
        .writeHead(200, {
          'x-travel-user': 'remote-user',
          'x-travel-tier': 'gold',
          'x-internal': 'hidden',
          'set-cookie': 'a=b',
        })
        .end('ignored');
    const { app, seen } = stageApp(stageFor(), mappingRecord());
    const res = await request(app.callback()).get('/v1/hotels/').set('X-Travel-User', 'spoofed');
    assert.equal(res.status, 200);
    assert.equal(res.body.headers['x-travel-user'], 'remote-user');
    assert.equal(res.body.headers['x-travel-tier'], 'gold');
    assert.equal(res.body.headers['x-internal'], undefined);
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal(seen.backendCalls, 1);
  });

  it('passes a 401 on with its body and allowed headers, and not the others', async () => {
    remote.answer = (res) =>
      res
        .writeHead(401, {
          'www-authenticate': 'Basic realm="remote"',
          'content-type': 'application/json',
          'x-internal': 'hidden',
        })
        .end('{"code":401,"message":"401: Unauthorized","detail":"from remote"}');
    const { app, seen } = stageApp(stageFor(), mappingRecord());
    const res = await request(app.callback()).get('/v1/hotels/');
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], 'Basic realm="remote"');
    assert.match(res.headers['content-type'], /^application\/json/);
    assert.equal(res.headers['x-internal'], undefined);
    assert.equal(res.body.detail, 'from remote');
    assert.equal(seen.backendCalls, 0);
  });

  it("passes a refusal on with its Vary, since the body the service chose by the client's Accept varies with it", async () => {
    remote.answer = (res) =>
      res
        .writeHead(401, { 'content-type': 'application/xml', vary: 'Accept' })
        .end('<response><code>401</code></response>');
    const { app } = stageApp(stageFor(), mappingRecord());
    const res = await request(app.callback()).get('/v1/hotels/').set('Accept', 'application/xml');
    assert.equal(res.status, 401);
    assert.equal(res.headers.vary, 'Accept');
    assert.equal(res.text, '<response><code>401</code></response>');
  });

  it('passes a refusal on with the headers it repeats as they came, a repeated Content-Type included', async () => {
    remote.answer = (res) =>
      res
        .writeHead(403, [
          ['Content-Type', 'text/plain'],
          ['Content-Type', 'text/html'],
          ['WWW-Authenticate', 'Basic realm="a"'],
          ['WWW-Authenticate', 'Bearer realm="b"'],
        ])
        .end('denied');
    const { app, seen } = stageApp(stageFor(), mappingRecord());
    const res = await request(app.callback()).get('/v1/hotels/');
    assert.equal(res.status, 403);
    assert.equal(res.text, 'denied');
    // Node's client joins a repeated challenge with ", " and keeps the first Content-Type of two.
    assert.equal(res.headers['www-authenticate'], 'Basic realm="a", Bearer realm="b"');
    assert.equal(res.headers['content-type'], 'text/plain');
    assert.equal(seen.backendCalls, 0);
  });

  it('passes a 302 on with Location and Set-Cookie', async () => {
    remote.answer = (res) =>
      res
        .writeHead(302, {
          location: 'https://login.example/?next=%2Fv1',
          'set-cookie': ['state=1; HttpOnly', 'nonce=2'],
          'x-internal': 'hidden',
        })
        .end();
    const { app, seen } = stageApp(stageFor(), mappingRecord());
    const res = await request(app.callback()).get('/v1/hotels/').redirects(0);
    assert.equal(res.status, 302);
    assert.equal(res.headers.location, 'https://login.example/?next=%2Fv1');
    assert.deepEqual(res.headers['set-cookie'], ['state=1; HttpOnly', 'nonce=2']);
    assert.equal(res.headers['x-internal'], undefined);
    assert.equal(res.headers['content-type'], undefined, 'an answer without a type gets none on the way');
    assert.equal(seen.backendCalls, 0);
  });

  it('copies X-Travel-User when the record leaves allowed_authorization_headers out, and drops a spoofed one', async () => {
    remote.answer = (res) => res.writeHead(200, { 'x-travel-user': 'remote-user', 'x-travel-tier': 'gold' }).end();
    const { app } = stageApp(stageFor({ allowed_authorization_headers: undefined }), mappingRecord());
    const res = await request(app.callback()).get('/v1/hotels/').set('X-Travel-User', 'spoofed');
    assert.equal(res.status, 200);
    assert.equal(res.body.headers['x-travel-user'], 'remote-user');
    assert.equal(res.body.headers['x-travel-tier'], undefined);
  });

  it('drops a spoofed X-Travel-User even when the record copies other headers only', async () => {
    remote.answer = (res) => res.writeHead(200, { 'x-travel-user': 'remote-user', 'x-travel-tier': 'gold' }).end();
    const { app } = stageApp(stageFor({ allowed_authorization_headers: ['x-travel-tier'] }), mappingRecord());
    const res = await request(app.callback()).get('/v1/hotels/').set('X-Travel-User', 'spoofed');
    assert.equal(res.status, 200);
    assert.equal(res.body.headers['x-travel-user'], undefined);
    assert.ok(!res.body.rawHeaders.includes('spoofed'));
    assert.equal(res.body.headers['x-travel-tier'], 'gold');
  });

  it('does not ask about a bypass_auth mapping', async () => {
    const { app, seen } = stageApp(stageFor(), mappingRecord({ prefix: '/open', bypass_auth: true }));
    const res = await request(app.callback()).get('/open/x').set('X-Travel-User', 'spoofed');
    assert.equal(res.status, 200);
    assert.equal(res.body.headers['x-travel-user'], undefined);
    assert.equal(remote.received.length, 0);
    assert.equal(seen.backendCalls, 1);
  });

  describe('when the auth service fails', () => {
    const dead = createServer();
    const slow = createServer(() => undefined);
    let deadAddress = '';
    let slowAddress = '';
    before(async () => {
      deadAddress = await listenLocal(dead);
      await close(dead);
      slowAddress = await listenLocal(slow);
    });
    after(() => close(slow));

    const failures: Array<[string, () => string, Partial<Record<keyof AuthServiceRecord, unknown>>]> = [
      ['is not listening', () => deadAddress, {}],
      ['does not answer within timeout_ms', () => slowAddress, { timeout_ms: 150 }],
      [
        'answers 500',
        () => {
          remote.answer = (res) =>
            res.writeHead(500, { 'www-authenticate': 'Basic realm="x"' }).end('stack trace here');
          return remote.address;
        },
        {},
      ],
    ];
    it('answers a status_on_error below 400 as it is, without a body or a type for it', async () => {
      const { app, seen } = stageApp(stageFor({ status_on_error: 302 }, deadAddress), mappingRecord());
      const res = await request(app.callback()).get('/v1/hotels/').redirects(0);
      assert.equal(res.status, 302);
      assert.equal(res.headers['content-type'], undefined);
      assert.equal(res.headers['content-length'], '0');
      assert.equal(seen.backendCalls, 0);
    });

    for (const [what, address, fields] of failures) {
      it(`answers 403 with the error body when it ${what}`, async () => {
        const { app, seen } = stageApp(stageFor(fields, address()), mappingRecord());
        const res = await request(app.callback()).get('/v1/hotels/').set('Authorization', basic('alice', 'wonderland'));
        assert.equal(res.status, 403);
        assert.equal(res.body.code, 403);
        assert.equal(res.body.message, '403: Forbidden');
        assert.equal(res.headers['www-authenticate'], undefined);
        assert.ok(!res.text.includes('stack trace'));
        assert.equal(seen.backendCalls, 0);
      });

      it(`answers status_on_error when it ${what}`, async () => {
        const { app } = stageApp(stageFor({ ...fields, status_on_error: { code: 503 } }, address()), mappingRecord());
        const res = await request(app.callback()).get('/v1/hotels/');
        assert.equal(res.status, 503);
        assert.equal(res.body.code, 503);
      });

      it(`logs that it ${what} once per burst of failures, without the credentials`, async () => {
        const { app } = stageApp(stageFor(fields, address()), mappingRecord());
        const ask = () =>
          request(app.callback()).get('/v1/hotels/').set('Authorization', basic('alice', 'wonderland')).expect(403);
        clock = 1_000_000;
        await ask();
        await ask();
        assert.equal(log.lines.length, 1, log.text());
        assert.equal(log.lines[0].level, 'warn');
        assert.equal(log.lines[0].msg, 'auth service unavailable; refusing requests');
        clock += 10_000;
        await ask();
        assert.equal(log.lines.length, 2, log.text());
        assert.equal(
          (log.lines[1].obj as { failures: number }).failures,
          2,
          'the second line counts the failure it stood for too',
        );
        assert.ok(!log.text().includes(basic('alice', 'wonderland').slice(6)) && !log.text().includes('wonderland'));
      });

      it(`lets the request on without a user when it ${what} and failure_mode_allow is set`, async () => {
        const { app, seen } = stageApp(stageFor({ ...fields, failure_mode_allow: true }, address()), mappingRecord());
        const res = await request(app.callback()).get('/v1/hotels/').set('X-Travel-User', 'spoofed');
        assert.equal(res.status, 200);
        assert.equal(res.body.headers['x-travel-user'], undefined);
        assert.equal(seen.backendCalls, 1);
      });
    }
  });
});

describe('the auth stage, asking this project auth service run alone', () => {
  const folder = usersFolder();
  let service: AuthService;
  let server: Server;
  let stage: Stage;
  before(async () => {
    service = createAuthService({
      maxWaitMs: NO_BOUND_MS,
      usersFile: folder.write('users.htpasswd', `alice:${quickHash('wonderland')}\n`),
      logger: memoryLogger(),
    });
    server = createServer(service.app.callback());
    const address = await listenLocal(server);
    stage = createAuthStage(
      authRecord({ auth_service: `http://${address}`, allowed_authorization_headers: ['x-travel-user'] }),
      new Map(),
    );
  });
  after(async () => {
    await stage.close?.();
    await close(server);
    await service.close();
    folder.remove();
  });

  it('lets alice through as alice, whatever user she claims', async () => {
    const { app } = stageApp(stage, mappingRecord());
    const res = await request(app.callback())
      .get('/v1/hotels/')
      .set('Authorization', basic('alice', 'wonderland'))
      .set('X-Travel-User', 'bob');
    assert.equal(res.status, 200);
    assert.equal(res.body.headers['x-travel-user'], 'alice');
  });

  it('gives the client the service 401, challenge and error body', async () => {
    const { app } = stageApp(stage, mappingRecord());
    const res = await request(app.callback()).get('/v1/hotels/').set('Authorization', 'Basic !!!');
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], 'Basic realm="gatehouse"');
    assert.equal(res.body.code, 401);
    assert.match(res.body.detail, /base64/);
  });
});
