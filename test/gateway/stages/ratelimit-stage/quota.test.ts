import assert from 'node:assert/strict';
import request from 'supertest';
import { createServiceApp } from '../../../../src/http';
import {
  createRateLimitStage,
  RATE_LIMIT_METADATA_STATE,
  rateLimitHeaders,
  type RateLimitStage,
} from '../../../../src/gateway/stages/ratelimit-stage';
import type { MappingRecord } from '../../../../src/gateway/config/schema';
import {
  createRateLimitGrpcServer,
  createRateLimitService,
  type RateLimitGrpcServer,
  type RateLimitService,
} from '../../../../src/ratelimit';
import { memoryLogger } from '../../../support/memory-logger';
import { labelledMappingRecord, rateLimitRecord } from '../../../support/records';
import { NO_BOUND_MS } from '../../../support/polling';

// 10 s into a minute, fixed: windows never turn during a test.
const T0 = Date.UTC(2024, 0, 1, 0, 0, 10);

/** A soft quota of 2 a minute per tenant, and a hard limit of 10 a minute per tenant. */
const LIMITS = [
  {
    domain: 'gateway',
    descriptors: [
      { key: 'quota', quota_mode: true, rate_limit: { name: 'tenant-quota', unit: 'minute', requests_per_unit: 2 } },
      { key: 'hard', rate_limit: { name: 'tenant-hard', unit: 'minute', requests_per_unit: 10 } },
    ],
  },
];

const MAPPING = labelledMappingRecord({
  labels: {
    gateway: [
      { request_label_group: [{ quota: { header: 'x-tenant' } }] },
      { request_label_group: [{ hard: { header: 'x-tenant' } }] },
    ],
  },
});

/** A gateway stand-in whose backend answers with the rate-limit metadata the stage left for it. */
function quotaApp(stage: RateLimitStage, mapping: MappingRecord) {
  const app = createServiceApp();
  const seen = { backendCalls: 0 };
  app.use(async (ctx) => {
    if (!(await stage.run(ctx, mapping))) return;
    seen.backendCalls++;
    ctx.body = { metadata: ctx.state[RATE_LIMIT_METADATA_STATE] ?? null };
  });
  return { app, seen };
}

describe('rate-limit stage and quota-mode limits', () => {
  describe('with the built-in service in-process', () => {
    let service: RateLimitService;
    let stage: RateLimitStage;
    before(() => {
      service = createRateLimitService({ limits: LIMITS, logger: memoryLogger(), now: () => T0 });
      stage = createRateLimitStage(rateLimitRecord(), new Map([[service.name, service]]), { logger: memoryLogger() });
    });
    after(async () => {
      await stage.close?.();
      await service.close();
    });

    it('lets a request over its quota through, telling the backend which descriptor is over', async () => {
      const { app, seen } = quotaApp(stage, MAPPING);
      const responses = [];
      for (let i = 0; i < 3; i++) responses.push(await request(app.callback()).get('/').set('X-Tenant', 'acme'));
      assert.deepEqual(
        responses.map((r) => r.status),
        [200, 200, 200],
      );
      assert.equal(seen.backendCalls, 3);
      assert.deepEqual(responses[0].body.metadata, {
        domain: 'gateway',
        descriptors: [{ entries: ['quota=acme'] }, { entries: ['hard=acme'] }],
        quotaModeEnabled: true,
      });
      assert.deepEqual(responses[2].body.metadata.quotaModeViolations, [0]);
      assert.equal(stage.stats().quotaExceeded, 1);
      assert.equal(stage.stats().overLimit, 0);
    });

    it('sends neither Retry-After nor the exceeded quota in the RateLimit headers of a request it lets through', async () => {
      const { app } = quotaApp(stage, MAPPING);
      for (let i = 0; i < 2; i++) await request(app.callback()).get('/').set('X-Tenant', 'globex');
      const over = await request(app.callback()).get('/').set('X-Tenant', 'globex');
      assert.equal(over.status, 200);
      assert.equal(over.headers['retry-after'], undefined);
      assert.equal(over.headers['ratelimit-policy'], '"tenant-hard";q=10;w=60');
      assert.equal(over.headers.ratelimit, '"tenant-hard";r=7;t=50');
    });

    it('still answers 429 at an ordinary limit, its Retry-After from that limit', async () => {
      const { app } = quotaApp(stage, MAPPING);
      const codes = [];
      for (let i = 0; i < 11; i++)
        codes.push((await request(app.callback()).get('/').set('X-Tenant', 'initech')).status);
      assert.deepEqual(codes, [...Array(10).fill(200), 429]);
    });
  });

  describe('with the service over gRPC', () => {
    let server: RateLimitGrpcServer;
    let stage: RateLimitStage;
    before(async () => {
      server = createRateLimitGrpcServer(createRateLimitService({ limits: LIMITS, logger: memoryLogger() }), {
        port: 0,
      });
      const port = await server.start();
      stage = createRateLimitStage(
        rateLimitRecord({ service: `127.0.0.1:${port}`, timeout_ms: NO_BOUND_MS }),
        new Map(),
        {
          logger: memoryLogger(),
        },
      );
    });
    after(async () => {
      await stage.close?.();
      await server.stop();
    });

    it('lets a request over its quota through, with the metadata the service sent', async () => {
      const { app, seen } = quotaApp(stage, MAPPING);
      const responses = [];
      for (let i = 0; i < 3; i++) responses.push(await request(app.callback()).get('/').set('X-Tenant', 'remote'));
      assert.deepEqual(
        responses.map((r) => r.status),
        [200, 200, 200],
      );
      assert.equal(seen.backendCalls, 3);
      assert.deepEqual(responses[2].body.metadata, {
        domain: 'gateway',
        descriptors: [{ entries: ['quota=remote'] }, { entries: ['hard=remote'] }],
        quotaModeEnabled: true,
        quotaModeViolations: [0],
      });
      assert.equal(responses[2].headers['retry-after'], undefined);
    });
  });

  describe('headers', () => {
    const limit = (requestsPerUnit: number, name: string) => ({ requestsPerUnit, unit: 'MINUTE' as const, name });

    it('take Retry-After from the limit that refused, not from a quota exceeded beside it', () => {
      const headers = rateLimitHeaders({
        overallCode: 'OVER_LIMIT',
        statuses: [
          {
            code: 'OVER_LIMIT',
            currentLimit: { requestsPerUnit: 100, unit: 'DAY', name: 'daily-quota' },
            limitRemaining: 0,
            durationUntilResetMs: 80_000_000,
          },
          { code: 'OVER_LIMIT', currentLimit: limit(5, 'hard'), limitRemaining: 0, durationUntilResetMs: 20_000 },
        ],
        dynamicMetadata: { domain: 'd', descriptors: [], quotaModeEnabled: true, quotaModeViolations: [0] },
      });
      assert.deepEqual(headers, {
        'RateLimit-Policy': '"hard";q=5;w=60',
        RateLimit: '"hard";r=0;t=20',
        'Retry-After': '20',
      });
    });

    it('leave out a status over its limit when the answer is OK, even without metadata', () => {
      const headers = rateLimitHeaders({
        overallCode: 'OK',
        statuses: [
          { code: 'OVER_LIMIT', currentLimit: limit(2, 'quota'), limitRemaining: 0, durationUntilResetMs: 20_000 },
          { code: 'OK', currentLimit: limit(9, 'hard'), limitRemaining: 4, durationUntilResetMs: 20_000 },
        ],
      });
      assert.deepEqual(headers, { 'RateLimit-Policy': '"hard";q=9;w=60', RateLimit: '"hard";r=4;t=20' });
    });

    it('take Retry-After from a quota when quotas alone refused, as a service that refuses once every quota is over does', () => {
      const headers = rateLimitHeaders({
        overallCode: 'OVER_LIMIT',
        statuses: [
          { code: 'OVER_LIMIT', currentLimit: limit(2, 'quota'), limitRemaining: 0, durationUntilResetMs: 20_000 },
        ],
        dynamicMetadata: { quotaModeEnabled: true, quotaModeViolations: [0] },
      });
      assert.equal(headers['Retry-After'], '20');
    });
  });
});
