import assert from 'node:assert/strict';
import http from 'node:http';
import request from 'supertest';
import { createAuthService, type AuthDecision, type AuthRequest, type AuthService } from '../../../../src/auth';
import { createAuthStage } from '../../../../src/gateway/stages/auth-stage';
import type { GatehouseModule, ModuleRegistry } from '../../../../src/gateway/module';
import type { Stage } from '../../../../src/gateway/stages/stage';
import { authRecord, mappingRecord } from '../../../support/records';
import { basic, quickHash, usersFolder } from '../../../support/credentials';
import { memoryLogger } from '../../../support/memory-logger';
import { close, listenLocal } from '../../../support/server';
import { stageApp, type BackendView } from '../../../support/stage-app';
import { NO_BOUND_MS } from '../../../support/polling';

describe('the auth stage, with the built-in auth service in-process', () => {
  const folder = usersFolder();
  let service: AuthService;
  let modules: ModuleRegistry;
  let stage: Stage;
  const record = authRecord({ auth_service: 'auth', allowed_authorization_headers: ['X-Travel-User'] });
  before(() => {
    const file = folder.write('users.htpasswd', `alice:${quickHash('wonderland')}\nbob:${quickHash('builder')}\n`);
    service = createAuthService({ maxWaitMs: NO_BOUND_MS, usersFile: file, logger: memoryLogger() });
    modules = new Map<string, GatehouseModule>([['auth', service]]);
    stage = createAuthStage(record, modules);
  });
  after(async () => {
    await stage.close?.();
    await service.close();
    folder.remove();
  });

  it('lets matching credentials through and tells the backend the user', async () => {
    const { app, seen } = stageApp(stage, mappingRecord());
    const res = await request(app.callback())
      .get('/v1/hotels/bookings/1')
      .set('Authorization', basic('alice', 'wonderland'));
    assert.equal(res.status, 200);
    assert.equal((res.body as BackendView).headers['x-travel-user'], 'alice');
    assert.equal(seen.backendCalls, 1);
  });

  it('answers 401 with the challenge and error body without credentials, and never reaches the backend', async () => {
    const { app, seen } = stageApp(stage, mappingRecord());
    const res = await request(app.callback()).get('/v1/hotels/bookings/1');
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], 'Basic realm="gatehouse"');
    assert.match(res.headers['content-type'], /^application\/json/);
    assert.equal(res.body.code, 401);
    assert.equal(res.body.message, '401: Unauthorized');
    assert.equal(seen.backendCalls, 0);
  });

  it('replaces a spoofed X-Travel-User with the authenticated user', async () => {
    const { app } = stageApp(stage, mappingRecord());
    const res = await request(app.callback())
      .get('/v1/hotels/bookings/1')
      .set('Authorization', basic('bob', 'builder'))
      .set('X-Travel-User', 'alice');
    assert.equal(res.status, 200);
    const view = res.body as BackendView;
    assert.equal(view.headers['x-travel-user'], 'bob');
    assert.ok(!view.rawHeaders.includes('alice'), 'the spoofed value is gone from the raw headers too');
  });

  it('refuses a spoofed X-Travel-User that comes without credentials', async () => {
    const { app, seen } = stageApp(stage, mappingRecord());
    const res = await request(app.callback()).get('/v1/hotels/').set('X-Travel-User', 'alice');
    assert.equal(res.status, 401);
    assert.equal(seen.backendCalls, 0);
  });

  it('lets a bypass_auth mapping through without credentials, but still drops a spoofed user', async () => {
    const { app, seen } = stageApp(stage, mappingRecord({ name: 'open', prefix: '/open', bypass_auth: true }));
    const res = await request(app.callback()).get('/open/thing').set('x-travel-user', 'alice').set('X-Other', 'kept');
    assert.equal(res.status, 200);
    const view = res.body as BackendView;
    assert.equal(view.headers['x-travel-user'], undefined);
    assert.equal(view.headers['x-other'], 'kept');
    assert.equal(seen.backendCalls, 1);
  });

  it('lets through the second time from the cache without checking the password again', async () => {
    const { app } = stageApp(stage, mappingRecord());
    const before = service.stats().verifications;
    for (let i = 0; i < 3; i++) {
      const res = await request(app.callback()).get('/v1/hotels/').set('Authorization', basic('alice', 'wonderland'));
      assert.equal(res.body.headers['x-travel-user'], 'alice');
    }
    assert.ok(service.stats().verifications - before <= 1);
  });

  it('tells the backend each user of requests that share one kept-alive connection, as behind a proxy', async () => {
    const { app } = stageApp(stage, mappingRecord());
    const server = http.createServer(app.callback());
    const address = await listenLocal(server);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const asks: [string, string][] = [
      ['alice', 'wonderland'],
      ['bob', 'builder'],
      ['alice', 'wonderland'],
      ['bob', 'wonderland'],
      ['bob', 'builder'],
    ];
    try {
      const seen: unknown[] = [];
      const sockets = new Set<unknown>();
      for (const [user, password] of asks) {
        const answer = await new Promise<{ status: number; body: string; socket: unknown }>((resolve, reject) => {
          const req = http.get(
            `http://${address}/v1/hotels/`,
            { agent, headers: { authorization: basic(user, password) } },
            (res) => {
              let body = '';
              res.setEncoding('utf8');
              res.on('data', (chunk: string) => (body += chunk));
              res.on('end', () => resolve({ status: res.statusCode!, body, socket: req.socket }));
            },
          );
          req.on('error', reject);
        });
        sockets.add(answer.socket);
        seen.push(
          answer.status === 200 ? (JSON.parse(answer.body) as BackendView).headers['x-travel-user'] : answer.status,
        );
      }
      assert.deepEqual(seen, ['alice', 'bob', 'alice', 401, 'bob']);
      assert.equal(sockets.size, 1);
    } finally {
      agent.destroy();
      await close(server);
    }
  });
});

describe('the auth stage with another in-process authenticator', () => {
  const asked: AuthRequest[] = [];
  let answer: () => Promise<AuthDecision> = async () => ({ status: 200, headers: { 'x-travel-user': 'zed' } });
  const fake: GatehouseModule = {
    name: 'custom-auth',
    authenticate(req) {
      asked.push(req);
      return answer();
    },
  };
  const modules: ModuleRegistry = new Map([
    ['custom-auth', fake],
    ['hotel-booking', { name: 'hotel-booking' }],
  ]);
  beforeEach(() => {
    asked.length = 0;
    answer = async () => ({ status: 200, headers: { 'x-travel-user': 'zed' } });
  });

  it('passes on a 429 of the auth service with its Retry-After and detail, in the error body', async () => {
    answer = async () => ({
      status: 429,
      headers: { 'retry-after': '1', 'www-authenticate': 'Basic realm="gatehouse"', 'x-internal': 'hidden' },
      detail: 'too many credential checks at once',
    });
    const stage = createAuthStage(authRecord({ auth_service: 'custom-auth' }), modules);
    const { app, seen } = stageApp(stage, mappingRecord());
    const res = await request(app.callback()).get('/v1/hotels/').set('Authorization', 'Basic eDp5');
    assert.equal(res.status, 429);
    assert.equal(res.headers['retry-after'], '1');
    assert.equal(res.headers['www-authenticate'], 'Basic realm="gatehouse"');
    assert.equal(res.headers['x-internal'], undefined);
    assert.deepEqual(res.body, {
      code: 429,
      message: '429: Too Many Requests',
      detail: 'too many credential checks at once',
    });
    assert.equal(seen.backendCalls, 0);
  });

  it('asks with the method, path_prefix + the normalised path + query, and only the headers it may see', async () => {
    const stage = createAuthStage(
      authRecord({
        auth_service: 'custom-auth',
        path_prefix: '/check',
        allowed_authorization_headers: ['x-travel-user'],
        allowed_request_headers: ['x-request-id'],
      }),
      modules,
    );
    const { app } = stageApp(stage, mappingRecord(), () => '/v1/hotels/bookings/1');
    const res = await request(app.callback())
      .put('/v1/hotels/../hotels/bookings/1?a=1&b=two')
      .set('Authorization', 'Basic eDp5')
      .set('Cookie', 'session=1')
      .set('User-Agent', 'tests')
      .set('X-Request-Id', 'r-1')
      .set('X-Not-Allowed', 'secret')
      .set('X-Travel-User', 'spoof')
      .send({ some: 'body' });
    assert.equal(res.status, 200);
    assert.equal(asked.length, 1);
    const [req] = asked;
    assert.equal(req.method, 'PUT');
    assert.equal(req.url, '/check/v1/hotels/bookings/1?a=1&b=two');
    assert.equal(req.headers.authorization, 'Basic eDp5');
    assert.equal(req.headers.cookie, 'session=1');
    assert.equal(req.headers['user-agent'], 'tests');
    assert.equal(req.headers['x-request-id'], 'r-1');
    assert.equal(req.headers['x-forwarded-proto'], 'http');
    assert.ok(req.headers['x-forwarded-for']);
    assert.equal(req.headers['x-not-allowed'], undefined);
    assert.equal(req.headers['x-travel-user'], undefined);
    assert.equal(req.headers['content-type'], undefined);
    assert.equal(res.body.headers['x-travel-user'], 'zed');
  });

  it('gives an in-process authenticator the body include_body names, and none without it', async () => {
    for (const include_body of [{ max_bytes: 5, allow_partial: true }, null]) {
      asked.length = 0;
      const stage = createAuthStage(authRecord({ auth_service: 'custom-auth', include_body }), modules);
      const { app } = stageApp(stage, mappingRecord());
      const res = await request(app.callback()).post('/v1/hotels/bookings/').type('text').send('hotel=h1&nights=3');
      assert.equal(res.status, 200);
      assert.equal(asked[0].body?.toString(), include_body ? 'hotel' : undefined);
    }
  });

  it('asks an authenticator that names the headers it reads with those alone, among those it may see', async () => {
    const reader = {
      name: 'reader',
      authenticate: fake.authenticate,
      requestHeaders: ['authorization', 'x-not-allowed'],
    };
    const stage = createAuthStage(authRecord({ auth_service: 'reader' }), new Map([['reader', reader]]));
    const { app } = stageApp(stage, mappingRecord());
    const res = await request(app.callback())
      .get('/v1/hotels/?a=1')
      .set('Authorization', 'Basic eDp5')
      .set('Cookie', 'session=1')
      .set('X-Not-Allowed', 'secret');
    assert.equal(res.status, 200);
    assert.equal(asked.length, 1);
    assert.equal(asked[0].url, '/v1/hotels/?a=1');
    assert.deepEqual(asked[0].headers, { authorization: 'Basic eDp5' });
  });

  it('passes a refusal on with its status, body and allowed headers only', async () => {
    answer = async () => ({
      status: 403,
      headers: {
        'content-type': 'text/plain',
        'www-authenticate': 'Basic realm="x"',
        'x-internal': 'no',
        'x-travel-user': 'zed',
      },
      body: 'go away',
    });
    const stage = createAuthStage(authRecord({ auth_service: 'custom-auth' }), modules);
    const { app, seen } = stageApp(stage, mappingRecord());
    const res = await request(app.callback()).get('/v1/hotels/');
    assert.equal(res.status, 403);
    assert.equal(res.text, 'go away');
    assert.match(res.headers['content-type'], /^text\/plain/);
    assert.equal(res.headers['www-authenticate'], 'Basic realm="x"');
    assert.equal(res.headers['x-internal'], undefined);
    assert.equal(seen.backendCalls, 0);
  });

  it('answers the project error body for a refusal that has none', async () => {
    answer = async () => ({ status: 401, headers: { 'www-authenticate': 'Basic realm="y"' } });
    const stage = createAuthStage(authRecord({ auth_service: 'custom-auth' }), modules);
    const { app } = stageApp(stage, mappingRecord());
    const res = await request(app.callback()).get('/v1/hotels/');
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], 'Basic realm="y"');
    assert.deepEqual(res.body, { code: 401, message: '401: Unauthorized' });
  });

  for (const [what, fail] of [
    ['throws', async (): Promise<AuthDecision> => Promise.reject(new Error('broken'))],
    ['answers 503', async (): Promise<AuthDecision> => ({ status: 503, headers: {}, body: 'down' })],
  ] as const) {
    it(`answers status_on_error when the authenticator ${what}`, async () => {
      answer = fail;
      const stage = createAuthStage(
        authRecord({ auth_service: 'custom-auth', status_on_error: { code: 502 } }),
        modules,
      );
      const { app, seen } = stageApp(stage, mappingRecord());
      const res = await request(app.callback()).get('/v1/hotels/');
      assert.equal(res.status, 502);
      assert.equal(res.body.code, 502);
      assert.equal(res.body.message, '502: Bad Gateway');
      assert.ok(!res.text.includes('broken') && !res.text.includes('down'));
      assert.equal(seen.backendCalls, 0);
    });

    it(`lets the request on, with no user, when the authenticator ${what} and failure_mode_allow is set`, async () => {
      answer = fail;
      const stage = createAuthStage(
        authRecord({
          auth_service: 'custom-auth',
          failure_mode_allow: true,
          allowed_authorization_headers: ['x-travel-user'],
        }),
        modules,
      );
      const { app } = stageApp(stage, mappingRecord());
      const res = await request(app.callback()).get('/v1/hotels/').set('X-Travel-User', 'spoof');
      assert.equal(res.status, 200);
      assert.equal(res.body.headers['x-travel-user'], undefined);
    });
  }

  it('refuses to build for a name that is neither an authenticating module nor an address', () => {
    assert.throws(() => createAuthStage(authRecord({ auth_service: 'nowhere' }), modules), /'nowhere' is neither/);
    assert.throws(
      () => createAuthStage(authRecord({ auth_service: 'hotel-booking' }), modules),
      /'hotel-booking' is neither/,
    );
    assert.throws(() => createAuthStage(authRecord({ auth_service: 'ftp://x' }), modules), /only http and https/);
  });
});
