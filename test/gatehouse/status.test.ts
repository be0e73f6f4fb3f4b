import assert from 'node:assert/strict';
import { createRateLimitService } from '../../src/ratelimit';
import { dependencyStatus, type StatusSources } from '../../src/gatehouse/status';
import { configOf, mapping } from '../support/records';
import { createMetrics } from '../../src/telemetry';
import type { GatewayConfig, UpstreamHealth } from '../../src/gateway';

const RATE_LIMIT_SERVICE = { apiVersion: 'gateway/v1', kind: 'RateLimitService', name: 'limits', service: 'rl:8081' };
const AUTH_SERVICE = { apiVersion: 'gateway/v1', kind: 'AuthService', name: 'auth', auth_service: 'auth.internal:80' };

/** Sources over `config`, the modules and upstreams given. */
function sources(config: GatewayConfig, over: Partial<StatusSources> = {}, upstreams: UpstreamHealth[] = []) {
  const metrics = createMetrics({ processMetrics: false });
  const s: StatusSources = {
    config: () => config,
    modules: new Map(),
    gateway: { upstreams: () => upstreams },
    metrics,
    ...over,
  };
  return { status: dependencyStatus(s), metrics };
}

describe('gatehouse dependency status', () => {
  it('says what is not used, in words, when nothing is configured', async () => {
    const { status } = sources(configOf(mapping('/x/', 'api')));
    assert.deepEqual(await status(), [
      { name: 'Redis', state: 'off', detail: 'the rate-limit counters are kept in memory' },
      { name: 'Database', state: 'off', detail: 'bookings are kept in memory' },
      { name: 'Rate-limit service', state: 'off', detail: 'no RateLimitService: requests are not limited' },
      { name: 'Auth service', state: 'off', detail: 'no AuthService: requests are not authenticated' },
      { name: 'Upstream clusters', state: 'off', detail: 'every route is served in process' },
    ]);
  });

  it('counts the failed calls to remote auth and rate-limit services', async () => {
    const { status, metrics } = sources(configOf(mapping('/x/', 'api'), RATE_LIMIT_SERVICE, AUTH_SERVICE));
    const [, , before] = await status();
    assert.deepEqual(before, { name: 'Rate-limit service', state: 'ok', detail: 'rl:8081 (domain gateway)' });
    metrics.recordRateLimit('error');
    metrics.recordRateLimit('error');
    metrics.recordRateLimit('ok');
    metrics.recordAuth('error');
    const [, , rateLimit, auth] = await status();
    assert.deepEqual(rateLimit, {
      name: 'Rate-limit service',
      state: 'warn',
      detail: 'rl:8081 (domain gateway): 2 calls failed since the start',
    });
    assert.deepEqual(auth, {
      name: 'Auth service',
      state: 'warn',
      detail: 'auth.internal:80: 1 check failed since the start',
    });
  });

  it('says a built-in rate-limit service with no limits answers OK to everything', async () => {
    const ratelimit = createRateLimitService({ limits: [] });
    const { status } = sources(configOf(mapping('/x/', 'api'), { ...RATE_LIMIT_SERVICE, service: 'ratelimit' }), {
      modules: new Map([['ratelimit', ratelimit]]),
    });
    const [, , rateLimit] = await status();
    assert.deepEqual(rateLimit, {
      name: 'Rate-limit service',
      state: 'warn',
      detail: 'built-in, with no limits: every request is answered OK',
    });
    await ratelimit.close();
  });

  it('names each upstream cluster with endpoints ejected, down when all are, and counts those past the first 20', async () => {
    const cluster = (name: string, endpoints: number, ejected: string[]): UpstreamHealth => ({
      cluster: name,
      endpoints,
      ejected,
    });
    const many = Array.from({ length: 22 }, (_, i) => cluster(`c${i}`, 3, ['10.0.0.1:80']));
    const { status } = sources(configOf(mapping('/x/', 'api')), {}, [
      cluster('quote', 2, ['10.0.0.7:8080', '10.0.0.8:8080']),
      cluster('fine', 4, []),
      ...many,
    ]);
    const rows = (await status()).slice(4);
    assert.deepEqual(rows[0], {
      name: 'quote',
      state: 'down',
      detail: 'upstream cluster: 2 of 2 endpoints ejected for failing: 10.0.0.7:8080, 10.0.0.8:8080',
    });
    assert.deepEqual(rows[1], {
      name: 'c0',
      state: 'warn',
      detail: 'upstream cluster: 1 of 3 endpoints ejected for failing: 10.0.0.1:80',
    });
    assert.equal(rows.length, 21);
    assert.deepEqual(rows[20], { name: 'Upstream clusters', state: 'warn', detail: 'and 3 more' });
  });

  it('says Redis and the database are down together, each with its reason', async () => {
    const { status } = sources(configOf(mapping('/x/', 'api')), {
      redis: {
        where: 'redis://10.0.0.3:6379',
        ready: () => Promise.reject(new Error('Redis is not connected: ECONNREFUSED')),
      },
      database: { where: 'PGlite in data', ready: () => Promise.reject(new Error('the database does not answer')) },
    });
    const [redis, database] = await status();
    assert.deepEqual(redis, {
      name: 'Redis',
      state: 'down',
      detail: 'redis://10.0.0.3:6379: Redis is not connected: ECONNREFUSED',
    });
    assert.deepEqual(database, {
      name: 'Database',
      state: 'down',
      detail: 'PGlite in data: the database does not answer',
    });
  });
});
