import assert from 'node:assert/strict';
import request from 'supertest';
import { createAuthService, type AuthService } from '../../../../src/auth';
import { createServiceApp } from '../../../../src/http';
import { createGateway, type Gateway, type GatehouseModule } from '../../../../src/gateway';
import { createRateLimitService, type RateLimitService } from '../../../../src/ratelimit';
import { authRecord, labelledMappingRecord, rateLimitRecord } from '../../../support/records';
import { basic, quickHash, usersFolder } from '../../../support/credentials';
import { memoryLogger } from '../../../support/memory-logger';
import { NO_BOUND_MS } from '../../../support/polling';

// 10 s into a minute, fixed: windows never turn during a test.
const T0 = Date.UTC(2024, 0, 1, 0, 0, 10);

describe('the rate-limit stage in the gateway', () => {
  const folder = usersFolder();
  let auth: AuthService;
  let limits: RateLimitService;
  let gateway: Gateway;
  let reached = 0;

  before(() => {
    auth = createAuthService({
      maxWaitMs: NO_BOUND_MS,
      usersFile: folder.write('users.htpasswd', `alice:${quickHash('wonderland')}\nbob:${quickHash('builder')}\n`),
      logger: memoryLogger(),
    });
    limits = createRateLimitService({
      now: () => T0,
      logger: memoryLogger(),
      limits: [
        {
          domain: 'gateway',
          descriptors: [
            { key: 'x-gateway-test-allow', rate_limit: { unit: 'minute', requests_per_unit: 3 } },
            { key: 'user', rate_limit: { name: 'per-user', unit: 'minute', requests_per_unit: 5 } },
          ],
        },
      ],
    });
    const backend = createServiceApp();
    backend.use((ctx) => {
      reached++;
      ctx.body = { user: ctx.get('x-travel-user') };
    });
    gateway = createGateway({
      modules: new Map<string, GatehouseModule>([
        ['auth', auth],
        ['ratelimit', limits],
        ['hotel-booking', { name: 'hotel-booking', app: backend }],
      ]),
      config: {
        mappings: [labelledMappingRecord()],
        authService: authRecord({ auth_service: 'auth', allowed_authorization_headers: ['X-Travel-User'] }),
        rateLimitService: rateLimitRecord({ service: 'ratelimit' }),
        sources: [],
      },
    });
  });
  after(async () => {
    await gateway.close();
    await limits.close();
    await auth.close();
    folder.remove();
  });

  it('answers 429 with the error body and headers after three requests with X-Gateway-Test-Allow', async () => {
    const before = reached;
    const statuses = [];
    let last: request.Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await request(gateway.app.callback())
        .get('/v1/hotels/')
        .set('Authorization', basic('alice', 'wonderland'))
        .set('X-Gateway-Test-Allow', 'loop');
      statuses.push(last.status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    assert.equal(reached - before, 3);
    assert.ok(last);
    assert.deepEqual(last.body, { code: 429, message: '429: Too Many Requests' });
    assert.equal(last.headers['retry-after'], '50');
    assert.equal(last.headers['ratelimit-policy'], '"default";q=3;w=60');
    assert.equal(last.headers.ratelimit, '"default";r=0;t=50');
    // The refused request cost alice nothing of her own 5: 3 are spent.
    const after = await request(gateway.app.callback())
      .get('/v1/hotels/')
      .set('Authorization', basic('alice', 'wonderland'));
    assert.equal(after.headers.ratelimit, '"per-user";r=1;t=50');
  });

  it('carries RateLimit headers on the routed response', async () => {
    const res = await request(gateway.app.callback()).get('/v1/hotels/').set('Authorization', basic('bob', 'builder'));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { user: 'bob' });
    assert.equal(res.headers['ratelimit-policy'], '"per-user";q=5;w=60');
    assert.equal(res.headers.ratelimit, '"per-user";r=4;t=50');
  });

  it('limits each authenticated user, whatever X-Travel-User the client sends', async () => {
    const ask = (claimed: string) =>
      request(gateway.app.callback())
        .get('/v1/hotels/')
        .set('Authorization', basic('alice', 'wonderland'))
        .set('X-Travel-User', claimed);
    const first = await ask('someone-0');
    assert.equal(first.status, 200);
    // What alice has left after this one, whatever the tests before spent of her 5.
    const left = Number(/;r=(\d+);/.exec(first.headers.ratelimit)?.[1]);
    assert.ok(left >= 0 && left <= 4, first.headers.ratelimit);
    const statuses = [];
    for (let i = 1; i <= 5; i++) statuses.push((await ask(`someone-${i}`)).status);
    assert.deepEqual(statuses, [...Array<number>(left).fill(200), ...Array<number>(5 - left).fill(429)]);
  });

  it('asks nothing of the service before authentication succeeds', async () => {
    const before = limits.stats().requests;
    const res = await request(gateway.app.callback()).get('/v1/hotels/').set('X-Gateway-Test-Allow', 'loop');
    assert.equal(res.status, 401);
    assert.equal(limits.stats().requests, before);
  });
});
