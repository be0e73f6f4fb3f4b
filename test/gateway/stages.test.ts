import assert from 'node:assert/strict';
import type http from 'node:http';
import type { Context } from 'koa';
import { ConfigError, createGateway, type Gateway, type MappingRecord, type Stage } from '../../src/gateway';
import { HttpError } from '../../src/http';
import { close, listen } from '../support/server';
import { configOf, mapping } from '../support/records';
import { echoModule, registry, type Echo } from '../support/modules';
import { send } from '../support/client';

const AUTH = { apiVersion: 'gateway/v1', kind: 'AuthService', name: 'auth', auth_service: 'auth' };
const RATE_LIMIT = { apiVersion: 'gateway/v1', kind: 'RateLimitService', name: 'rl', service: 'ratelimit' };

/** Building a gateway with `record` (beside one plain Mapping) fails with this one problem alone. */
function assertOnlyProblem(record: Record<string, unknown>, text: string): void {
  assert.throws(
    () =>
      createGateway({ modules: registry(echoModule('cars')), config: configOf(record, mapping('/v1/cars', 'cars')) }),
    (err: unknown) => err instanceof ConfigError && err.problems.length === 1 && err.problems[0].text === text,
  );
}

describe('gateway stages', () => {
  let gateway: Gateway;
  let server: http.Server;
  let base: string;
  const calls: string[] = [];
  const closed: string[] = [];

  function fakeStage(name: string, decide: (ctx: Context) => boolean): Stage {
    return {
      async run(ctx: Context, m: MappingRecord) {
        calls.push(`${name}:${m.name}:${ctx.path}`);
        return decide(ctx);
      },
      async close() {
        closed.push(name);
      },
    };
  }

  before(async () => {
    gateway = createGateway({
      modules: registry(echoModule('cars')),
      config: configOf(
        AUTH,
        RATE_LIMIT,
        mapping('/v1/cars', 'cars', { name: 'cars', rewrite: '', remove_request_headers: ['x-stage-note'] }),
        mapping('/open/', 'cars', { name: 'open', bypass_auth: true }),
      ),
      stages: {
        auth: (record) => {
          assert.equal(record.auth_service, 'auth');
          return fakeStage('auth', (ctx) => {
            delete ctx.req.headers['x-travel-user'];
            if (ctx.state.mapping.bypass_auth) return true;
            if (ctx.get('x-throw')) throw new HttpError(403, 'told to refuse');
            if (ctx.get('authorization') !== 'ok') {
              ctx.status = 401;
              ctx.set('WWW-Authenticate', 'Basic realm="test"');
              ctx.body = { code: 401, message: '401: Unauthorized' };
              return false;
            }
            ctx.req.headers['x-travel-user'] = 'alice';
            ctx.req.headers['x-stage-note'] = 'to be removed';
            return true;
          });
        },
        rateLimit: (record) => {
          assert.equal(record.domain, 'gateway');
          return fakeStage('rl', (ctx) => {
            if (!ctx.get('x-over')) return true;
            ctx.status = 429;
            ctx.body = { code: 429, message: '429: Too Many Requests' };
            return false;
          });
        },
      },
    });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });

  after(async () => {
    await close(server);
    await gateway.close();
  });

  beforeEach(() => {
    calls.length = 0;
  });

  it('runs auth, then rate limiting, on the normalised path, then forwards', async () => {
    const res = await send(base, '/v1/%63ars/x', { headers: { authorization: 'ok' } });
    assert.equal(res.status, 200);
    assert.deepEqual(calls, ['auth:cars:/v1/cars/x', 'rl:cars:/v1/cars/x']);
    assert.equal((res.json() as Echo).headers['x-travel-user'], 'alice');
  });

  it('stops at a stage that answered itself', async () => {
    const denied = await send(base, '/v1/cars/x');
    assert.equal(denied.status, 401);
    assert.equal(denied.headers['www-authenticate'], 'Basic realm="test"');
    assert.deepEqual(calls, ['auth:cars:/v1/cars/x']);

    calls.length = 0;
    const limited = await send(base, '/v1/cars/x', { headers: { authorization: 'ok', 'x-over': '1' } });
    assert.equal(limited.status, 429);
    assert.deepEqual(calls, ['auth:cars:/v1/cars/x', 'rl:cars:/v1/cars/x']);
  });

  it('answers a stage error with the error body', async () => {
    const res = await send(base, '/v1/cars/x', { headers: { 'x-throw': '1' } });
    assert.equal(res.status, 403);
    assert.deepEqual(res.json(), { code: 403, message: '403: Forbidden', detail: 'told to refuse' });
  });

  it('asks the auth stage about a bypass_auth mapping too, so that it can drop what a client claims', async () => {
    const res = await send(base, '/open/x', { headers: { 'X-Travel-User': 'mallory' } });
    assert.equal(res.status, 200);
    assert.deepEqual(calls, ['auth:open:/open/x', 'rl:open:/open/x']);
    assert.equal((res.json() as Echo).headers['x-travel-user'], undefined);
  });

  it('applies remove_request_headers before forwarding, after the stages', async () => {
    const res = await send(base, '/v1/cars', { headers: { authorization: 'ok' } });
    assert.equal((res.json() as Echo).headers['x-stage-note'], undefined);
    const open = await send(base, '/open/', { headers: { 'x-stage-note': 'kept elsewhere' } });
    assert.equal((open.json() as Echo).headers['x-stage-note'], 'kept elsewhere');
  });

  it('answers own paths without asking any stage', async () => {
    assert.equal((await send(base, '/gateway/v0/check_ready')).status, 200);
    assert.deepEqual(calls, []);
  });

  it('closes the stages of a replaced configuration', async () => {
    closed.length = 0;
    gateway.reconfigure(configOf(AUTH, RATE_LIMIT, mapping('/v1/cars', 'cars')));
    // Nothing is in flight: the old stages close at once.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(closed.sort(), ['auth', 'rl']);
  });
});

describe('gateway stage construction', () => {
  it('refuses a configuration whose stage cannot be built, naming the record', () => {
    assert.throws(
      () =>
        createGateway({
          modules: registry(echoModule('cars')),
          config: configOf(AUTH, mapping('/v1/cars', 'cars')),
          stages: {
            auth: () => {
              throw new Error("auth_service 'auth' is not a registered module");
            },
          },
        }),
      (err: Error) =>
        /AuthService auth: auth_service: auth_service 'auth' is not a registered module/.test(err.message),
    );
  });

  it('names the AuthService record once when its auth_service is neither a module that authenticates nor an address', () => {
    assertOnlyProblem(
      { ...AUTH, auth_service: 'auths' },
      "AuthService auth: auth_service: auth_service 'auths' is neither a built-in module that authenticates nor an address (host:port or URL)",
    );
  });

  it('refuses an AuthService address whose port is left out, rather than asking port 80', () => {
    assertOnlyProblem(
      { ...AUTH, auth_service: '127.0.0.1:' },
      "AuthService auth: auth_service: auth_service '127.0.0.1:' is not host:port or a URL (with a port from 1 to 65535)",
    );
  });

  it('says where the built-in auth service comes from when a record names it and it is not there', () => {
    assertOnlyProblem(
      { ...AUTH, auth_service: 'auth' },
      "AuthService auth: auth_service: auth_service 'auth' is neither a built-in module that authenticates nor an address (host:port or URL); " +
        'the built-in auth service runs when the config folder has users.htpasswd',
    );
  });

  it('refuses a RateLimitService whose service is neither a module that rate-limits nor an address', () => {
    for (const service of ['ratelimits', 'cars']) {
      assertOnlyProblem(
        { ...RATE_LIMIT, service },
        `RateLimitService rl: service: service '${service}' is neither a built-in module that rate-limits nor an address (host:port or URL)`,
      );
    }
  });

  it('refuses a RateLimitService address that no gRPC client could reach as written', () => {
    for (const service of ['rl.example:99999', '127.0.0.1:8081/path', 'grpc://rl.example']) {
      assertOnlyProblem(
        { ...RATE_LIMIT, service },
        `RateLimitService rl: service: service '${service}' is not the address of a gRPC rate-limit service: host:port, [v6]:port, grpc://host:port (plaintext) or https://host:port (TLS)`,
      );
    }
  });

  it('never repeats the password of an address written with credentials', () => {
    const secret = 'S3cr3tPw';
    assert.throws(
      () =>
        createGateway({
          modules: registry(echoModule('cars')),
          config: configOf(
            { ...AUTH, auth_service: `http://svc:${secret}@127.0.0.1:19300` },
            { ...RATE_LIMIT, service: `http://svc:${secret}@127.0.0.1:19301` },
            mapping('/v1/cars', `http://svc:${secret}@127.0.0.1:19302/`),
          ),
        }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.problems.length, 3, err.message);
        assert.ok(!err.message.includes(secret), err.message);
        for (const p of err.problems) assert.match(p.text, /http:\/\/\*\*\*@127\.0\.0\.1:1930[0-2]/);
        return true;
      },
    );
  });

  it('builds no stage for a configuration without AuthService or RateLimitService', async () => {
    const gateway = createGateway({
      modules: registry(echoModule('cars')),
      config: configOf(mapping('/v1/cars', 'cars')),
      stages: {
        auth: () => assert.fail('no auth stage was asked for'),
        rateLimit: () => assert.fail('no rate-limit stage was asked for'),
      },
    });
    await gateway.close();
  });
});
