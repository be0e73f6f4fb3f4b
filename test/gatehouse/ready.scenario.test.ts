import assert from 'node:assert/strict';
import request from 'supertest';
import { configFromRecords, createGateway } from '../../src/gateway';
import { freePort } from '../support/ports';
import { startRedis, type RedisProcess } from '../support/redis';
import { DEMO_CONFIG } from '../support/config-folder';
import { eventually } from '../support/polling';
import { startGatehouse, type Running } from '../support/gatehouse';

const READY = '/gateway/v0/check_ready';

/** The status of check_ready, once it is `status`; throws after a while otherwise. */
function readyBecomes(running: Running, status: number) {
  return eventually(async () => {
    const res = await request(running.url).get(READY);
    return res.status === status ? res : undefined;
  }, `check_ready to answer ${status}`);
}

describe('gatehouse readiness with Redis', function () {
  let redis: RedisProcess;
  let running: Running;

  before(async () => {
    redis = await startRedis();
    running = await startGatehouse({ configDir: DEMO_CONFIG, redisUrl: redis.url });
  });

  after(async () => {
    await running?.stop();
    await redis?.stop();
  });

  it('is ready once the config is loaded and Redis answers PING', async () => {
    const res = await readyBecomes(running, 200);
    assert.equal(res.body.status, 'ready');
    assert.equal(res.body.routes, running.gatehouse.gateway.snapshot().routes.length);
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  it('is not ready while Redis is down, with the reason, and ready again once it is back', async () => {
    const port = redis.port;
    await redis.kill();
    const down = await readyBecomes(running, 503);
    assert.equal(down.body.code, 503);
    assert.equal(down.body.message, '503: Service Unavailable');
    assert.equal(down.headers['cache-control'], 'no-store');
    // Why, in the words of the connection, not those of the client library's offline queue:
    // closed at first, then refused at every attempt to reconnect.
    assert.match(down.body.detail, /^not ready: Redis is not connected: (the connection was closed|.*ECONNREFUSED)/);
    await eventually(async () => {
      const res = await request(running.url).get(READY);
      return /^not ready: Redis is not connected: .*ECONNREFUSED/.test(res.body.detail) || undefined;
    }, 'check_ready to say the connection is refused');
    const lost = running.log.lines.filter(
      (l) => l.msg === 'Redis is unreachable: rate-limit decisions follow the failure mode until it is back',
    );
    assert.equal(lost.length, 1, 'the outage is told once, not at every reconnection attempt');
    assert.match(String(lost[0].err), /the connection was closed|ECONNREFUSED/);
    // Alive all the same: the process is fine, its store is not.
    await request(running.url).get('/gateway/v0/check_alive').expect(200, { status: 'alive' });
    // Requests still pass: the rate-limit service is unavailable, and the failure mode lets them through.
    await request(running.url).get('/v1/messages/1').expect(200);

    await redis.stop();
    redis = await startRedis({ port });
    const up = await readyBecomes(running, 200);
    assert.equal(up.body.status, 'ready');
    assert.ok(running.log.lines.some((l) => l.msg === 'Redis is connected again'));
  });

  it('answers a Redis that hangs within its deadline', async () => {
    await readyBecomes(running, 200);
    redis.pause();
    try {
      // Without its deadline the check would wait as long as Redis is frozen, past the test's timeout.
      const res = await request(running.url).get(READY).expect(503);
      assert.match(res.body.detail, /^not ready: Redis/);
    } finally {
      redis.resume();
    }
    await readyBecomes(running, 200);
  });
});

describe('gatehouse readiness with a Redis that is not there', function () {
  it('says at start that Redis cannot be reached, and why, never with its password', async () => {
    const port = await freePort();
    const running = await startGatehouse({ configDir: DEMO_CONFIG, redisUrl: `redis://:s3cret@127.0.0.1:${port}` });
    try {
      const [lost] = await running.log.waitForLines(1, (l) => String(l.msg).startsWith('Redis is unreachable'));
      assert.match(String(lost.err), new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
      const res = await request(running.url).get(READY).expect(503);
      assert.match(res.body.detail, /^not ready: Redis is not connected: .*ECONNREFUSED/);
      assert.ok(!running.log.raw.some((l) => l.includes('s3cret')));
    } finally {
      await running.stop();
    }
  });
});

describe('gatehouse readiness without Redis', function () {
  it('is ready once the config is loaded, counters in memory', async () => {
    const running = await startGatehouse({ configDir: DEMO_CONFIG });
    try {
      const res = await request(running.url).get(READY).expect(200);
      assert.equal(res.body.status, 'ready');
    } finally {
      await running.stop();
    }
  });

  it('is not ready without a config, nor when the readiness hook refuses', async () => {
    const empty = createGateway();
    const none = await request(empty.app.callback()).get(READY).expect(503);
    assert.equal(none.body.detail, 'no configuration is loaded');
    const config = configFromRecords([]);
    assert.ok(config.ok);
    const refusing = createGateway({
      config: config.config,
      readiness: () => Promise.reject(new Error('the database is away')),
    });
    const res = await request(refusing.app.callback()).get(READY).expect(503);
    assert.equal(res.body.detail, 'not ready: the database is away');
    await request(refusing.app.callback()).head(READY).expect(503);
    await request(refusing.app.callback()).get('/gateway/v0/check_alive').expect(200);
    await Promise.all([empty.close(), refusing.close()]);
  });
});
