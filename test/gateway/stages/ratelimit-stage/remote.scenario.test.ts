import assert from 'node:assert/strict';
import path from 'node:path';
import request from 'supertest';
import { createRateLimitStage, type RateLimitStage } from '../../../../src/gateway/stages/ratelimit-stage';
import { freePort } from '../../../support/ports';
import { memoryLogger } from '../../../support/memory-logger';
import { startSlowServer, type SlowServer } from '../../../support/slow-ratelimit-server';
import { labelledMappingRecord, rateLimitRecord } from '../../../support/records';
import { NO_BOUND_MS } from '../../../support/polling';
import { stageApp } from '../../../support/stage-app';
import { startRemoteService, type RemoteService } from '../../../support/remote-ratelimit';

const REMOTE_LIMITS = path.join(__dirname, '..', '..', '..', 'ratelimit', 'fixtures', 'remote');
const noModules = new Map();

describe('rate-limit stage with a remote service in another process', function () {
  let remote: RemoteService;
  let stage: RateLimitStage;

  before(async () => {
    remote = await startRemoteService(REMOTE_LIMITS);
    // The service's answers are what is tested: the stage waits for them as long as the test lets it.
    stage = createRateLimitStage(rateLimitRecord({ service: remote.address, timeout_ms: NO_BOUND_MS }), noModules, {
      logger: memoryLogger(),
    });
  });
  after(async () => {
    await stage?.close?.();
    await remote?.stop();
  });

  it('calls it over gRPC at the record address', () => {
    assert.equal(stage.target, remote.address);
  });

  it('admits up to the limit, then answers 429 with the headers', async () => {
    const { app, seen } = stageApp(stage, labelledMappingRecord());
    const codes = [];
    for (let i = 0; i < 3; i++)
      codes.push((await request(app.callback()).get('/').set('X-Gateway-Test-Allow', 'remote')).status);
    assert.deepEqual(codes, [200, 200, 429]);
    const refused = await request(app.callback()).get('/').set('X-Gateway-Test-Allow', 'remote');
    assert.equal(refused.status, 429);
    assert.deepEqual(refused.body, { code: 429, message: '429: Too Many Requests' });
    assert.match(refused.headers['retry-after'], /^\d+$/);
    assert.equal(refused.headers['ratelimit-policy'], '"default";q=2;w=86400');
    assert.equal(refused.headers.ratelimit, `"default";r=0;t=${refused.headers['retry-after']}`);
    assert.equal(seen.backendCalls, 2);
  });

  it('sends the user label and reports what remains', async () => {
    const { app } = stageApp(stage, labelledMappingRecord());
    const res = await request(app.callback()).get('/').set('X-Demo-User', 'erin');
    assert.equal(res.status, 200);
    assert.match(res.headers.ratelimit, /^"default";r=99;t=\d+$/);
  });

  it('lets requests through once the service has died, and refuses them with failure_mode_deny', async () => {
    const open = createRateLimitStage(rateLimitRecord({ service: remote.address, timeout_ms: 200 }), noModules, {
      logger: memoryLogger(),
    });
    const deny = createRateLimitStage(
      rateLimitRecord({ service: remote.address, timeout_ms: 200, failure_mode_deny: true }),
      noModules,
      {
        logger: memoryLogger(),
      },
    );
    try {
      await remote.stop();
      const a = await request(stageApp(open, labelledMappingRecord()).app.callback()).get('/').set('X-Demo-User', 'f');
      assert.equal(a.status, 200);
      const b = await request(stageApp(deny, labelledMappingRecord()).app.callback()).get('/').set('X-Demo-User', 'f');
      assert.equal(b.status, 500);
      assert.equal(open.stats().failures, 1);
    } finally {
      await open.close?.();
      await deny.close?.();
    }
  });
});

describe('rate-limit stage with a remote service that is not there', () => {
  it('lets requests through without waiting when nothing listens, and answers 500 with failure_mode_deny', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    for (const deny of [false, true]) {
      const logger = memoryLogger();
      // A deadline longer than the test: the answer comes from the refused connection.
      const stage = createRateLimitStage(
        rateLimitRecord({ service: address, timeout_ms: 600_000, failure_mode_deny: deny }),
        noModules,
        { logger },
      );
      try {
        const { app, seen } = stageApp(stage, labelledMappingRecord());
        const res = await request(app.callback()).get('/').set('X-Gateway-Test-Allow', 'x');
        assert.equal(res.status, deny ? 500 : 200);
        assert.equal(seen.backendCalls, deny ? 0 : 1);
        assert.equal(logger.lines[0]?.level, 'warn');
      } finally {
        await stage.close?.();
      }
    }
  });
});

describe('rate-limit stage with a slow remote service', () => {
  let slow: SlowServer;
  before(async () => {
    slow = await startSlowServer();
  });
  after(async () => {
    await slow.stop();
  });

  it('gives up at timeout_ms: the request passes, or gets 500 with failure_mode_deny', async () => {
    for (const deny of [false, true]) {
      const stage = createRateLimitStage(
        rateLimitRecord({ service: `127.0.0.1:${slow.port}`, timeout_ms: 100, failure_mode_deny: deny }),
        noModules,
        {
          logger: memoryLogger(),
        },
      );
      try {
        const { app } = stageApp(stage, labelledMappingRecord());
        const started = Date.now();
        const res = await request(app.callback()).get('/').set('X-Demo-User', 'g');
        const took = Date.now() - started;
        assert.equal(res.status, deny ? 500 : 200);
        // The server holds every call for good: only timeout_ms ends it.
        assert.ok(took >= 90, `took ${took} ms`);
        assert.equal(stage.stats().failures, 1);
      } finally {
        await stage.close?.();
      }
    }
    assert.equal(slow.calls, 2);
  });
});
