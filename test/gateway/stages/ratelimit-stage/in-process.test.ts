import assert from 'node:assert/strict';
import path from 'node:path';
import request from 'supertest';
import {
  buildDescriptors,
  createRateLimitStage,
  labelPlan,
  mostRestrictive,
  rateLimitHeaders,
  type RateLimitStage,
} from '../../../../src/gateway/stages/ratelimit-stage';
import type { GatehouseModule } from '../../../../src/gateway/module';
import {
  createRateLimitService,
  type RateLimitRequest,
  type RateLimitResponse,
  type RateLimitService,
} from '../../../../src/ratelimit';
import { memoryLogger } from '../../../support/memory-logger';
import { DEMO_LABELS, labelledMappingRecord, rateLimitRecord } from '../../../support/records';
import { stageApp } from '../../../support/stage-app';

const CONFIG = path.join(__dirname, '..', '..', '..', '..', 'config');
// 10 s into a minute, fixed: windows never turn during a test.
const T0 = Date.UTC(2024, 0, 1, 0, 0, 10);

/** A module answering with `answer`, keeping the requests it was asked. */
function fakeLimiter(
  answer: (req: RateLimitRequest) => Promise<RateLimitResponse>,
): GatehouseModule & { asked: RateLimitRequest[] } {
  const asked: RateLimitRequest[] = [];
  return {
    name: 'ratelimit',
    asked,
    shouldRateLimit(req) {
      asked.push(req);
      return answer(req);
    },
  };
}

const modulesOf = (...modules: GatehouseModule[]) => new Map(modules.map((m) => [m.name, m]));

describe('rate-limit stage labels', () => {
  const plan = labelPlan(labelledMappingRecord(), 'gateway')!;

  it('turns each label group into one descriptor of header values', () => {
    assert.deepEqual(buildDescriptors(plan, { 'x-gateway-test-allow': 'yes', 'x-travel-user': 'alice' }), [
      { entries: [{ key: 'x-gateway-test-allow', value: 'yes' }] },
      { entries: [{ key: 'user', value: 'alice' }] },
    ]);
  });

  it('leaves out an omit_if_not_present label whose header is missing, and a group left empty', () => {
    assert.deepEqual(buildDescriptors(plan, { 'x-travel-user': 'alice' }), [
      { entries: [{ key: 'user', value: 'alice' }] },
    ]);
  });

  it('drops the whole group when a header without omit_if_not_present is missing', () => {
    const p = labelPlan(
      labelledMappingRecord({
        labels: {
          gateway: [
            { request_label_group: [{ a: { header: 'x-a', omit_if_not_present: true } }, { u: { header: 'X-User' } }] },
          ],
        },
      }),
      'gateway',
    )!;
    assert.deepEqual(buildDescriptors(p, { 'x-a': '1' }), []);
    assert.deepEqual(buildDescriptors(p, { 'x-user': 'bob' }), [{ entries: [{ key: 'u', value: 'bob' }] }]);
    assert.deepEqual(buildDescriptors(p, { 'x-a': '1', 'x-user': 'bob' }), [
      {
        entries: [
          { key: 'a', value: '1' },
          { key: 'u', value: 'bob' },
        ],
      },
    ]);
  });

  it('sends a literal label as generic_key', () => {
    const p = labelPlan(
      labelledMappingRecord({
        labels: { gateway: [{ request_label_group: ['hotels', { u: { header: 'x-user' } }] }] },
      }),
      'gateway',
    )!;
    assert.deepEqual(buildDescriptors(p, { 'x-user': 'bob' }), [
      {
        entries: [
          { key: 'generic_key', value: 'hotels' },
          { key: 'u', value: 'bob' },
        ],
      },
    ]);
  });

  it('treats an empty header as missing and joins repeated ones', () => {
    assert.deepEqual(buildDescriptors(plan, { 'x-gateway-test-allow': '', 'x-travel-user': ['a', 'b'] }), [
      { entries: [{ key: 'user', value: 'a, b' }] },
    ]);
  });

  it('sends a UTF-8 header value as the text it spells, as Envoy sends its bytes', () => {
    // Node reads each header byte as one latin1 character: 'josé' arrives as 'josÃ©'.
    const utf8 = Buffer.from('josé ✓', 'utf8').toString('latin1');
    assert.deepEqual(buildDescriptors(plan, { 'x-travel-user': utf8 }), [
      { entries: [{ key: 'user', value: 'josé ✓' }] },
    ]);
  });

  it('keeps a header value that is not UTF-8 one character a byte, so that distinct bytes stay distinct values', () => {
    assert.deepEqual(buildDescriptors(plan, { 'x-travel-user': 'caf\xe9' }), [
      { entries: [{ key: 'user', value: 'caf\xe9' }] },
    ]);
    assert.deepEqual(buildDescriptors(plan, { 'x-travel-user': '\xff\xfe' }), [
      { entries: [{ key: 'user', value: '\xff\xfe' }] },
    ]);
  });

  it('has no plan for a mapping without labels of the domain', () => {
    assert.equal(labelPlan(labelledMappingRecord({ labels: undefined }), 'gateway'), null);
    assert.equal(labelPlan(labelledMappingRecord(), 'other'), null);
  });
});

describe('rate-limit headers', () => {
  const limit = (requestsPerUnit: number, name?: string) => ({
    requestsPerUnit,
    unit: 'MINUTE' as const,
    ...(name ? { name } : {}),
  });

  it('describe the most restrictive status in the IETF structured form', () => {
    const headers = rateLimitHeaders({
      overallCode: 'OK',
      statuses: [
        { code: 'OK', currentLimit: limit(60, 'per-user'), limitRemaining: 50, durationUntilResetMs: 30_000 },
        { code: 'OK', currentLimit: limit(3), limitRemaining: 1, durationUntilResetMs: 41_200 },
        { code: 'OK', limitRemaining: 0 },
      ],
    });
    assert.deepEqual(headers, { 'RateLimit-Policy': '"default";q=3;w=60', RateLimit: '"default";r=1;t=42' });
  });

  it('add Retry-After over the limit, from the status that waits longest', () => {
    const headers = rateLimitHeaders({
      overallCode: 'OVER_LIMIT',
      statuses: [
        { code: 'OK', currentLimit: limit(3), limitRemaining: 0, durationUntilResetMs: 5_000 },
        { code: 'OVER_LIMIT', currentLimit: limit(10, 'a'), limitRemaining: 0, durationUntilResetMs: 2_000 },
        { code: 'OVER_LIMIT', currentLimit: limit(20, 'b "quoted"'), limitRemaining: 0, durationUntilResetMs: 9_001 },
      ],
    });
    assert.deepEqual(headers, {
      'RateLimit-Policy': '"b \\"quoted\\"";q=20;w=60',
      RateLimit: '"b \\"quoted\\"";r=0;t=10',
      'Retry-After': '10',
    });
  });

  it('leave out a limit in shadow mode, which binds nothing, whatever it has left', () => {
    const headers = rateLimitHeaders({
      overallCode: 'OK',
      statuses: [
        { code: 'OK', currentLimit: limit(1, 'shadow'), limitRemaining: 0, durationUntilResetMs: 57_000, shadow: true },
        {
          code: 'OK',
          currentLimit: { requestsPerUnit: 10, unit: 'HOUR', name: 'burst' },
          limitRemaining: 9,
          durationUntilResetMs: 3_000_000,
        },
      ],
    });
    assert.deepEqual(headers, { 'RateLimit-Policy': '"burst";q=10;w=3600', RateLimit: '"burst";r=9;t=3000' });
    assert.deepEqual(
      rateLimitHeaders({
        overallCode: 'OK',
        statuses: [{ code: 'OK', currentLimit: limit(1), limitRemaining: 0, shadow: true }],
      }),
      {},
    );
  });

  it('are left out when no status carries a limit', () => {
    assert.deepEqual(
      rateLimitHeaders({ overallCode: 'OK', statuses: [{ code: 'OK', limitRemaining: 4_294_967_295 }] }),
      {},
    );
    assert.equal(mostRestrictive([]), undefined);
  });
});

describe('rate-limit stage construction', () => {
  it('refuses a service that is neither a module that rate-limits nor an address', () => {
    const api: GatehouseModule = { name: 'api' };
    assert.throws(
      () => createRateLimitStage(rateLimitRecord({ service: 'ratelimits' }), modulesOf(api)),
      /service 'ratelimits' is neither/,
    );
    assert.throws(
      () => createRateLimitStage(rateLimitRecord({ service: 'api' }), modulesOf(api)),
      /service 'api' is neither/,
    );
  });
});

describe('rate-limit stage with the built-in service in-process', () => {
  let service: RateLimitService;
  let stage: RateLimitStage;
  before(() => {
    service = createRateLimitService({ limitsDir: CONFIG, logger: memoryLogger(), now: () => T0 });
    stage = createRateLimitStage(rateLimitRecord(), modulesOf(service), { logger: memoryLogger() });
  });
  after(async () => {
    await stage.close?.();
    await service.close();
  });

  it('calls the module directly', () => {
    assert.equal(stage.target, 'in-process');
  });

  it('answers 429 with the error body, Retry-After and RateLimit headers past the demo limit', async () => {
    const { app, seen } = stageApp(stage, labelledMappingRecord());
    const server = request(app.callback());
    for (let i = 0; i < 3; i++) {
      const ok = await server.get('/').set('X-Gateway-Test-Allow', 'curl-loop');
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['ratelimit-policy'], '"test-allow";q=3;w=60');
      assert.equal(ok.headers.ratelimit, `"test-allow";r=${2 - i};t=50`);
    }
    const refused = await server.get('/').set('X-Gateway-Test-Allow', 'curl-loop');
    assert.equal(refused.status, 429);
    assert.match(refused.headers['content-type'], /^application\/json/);
    assert.deepEqual(refused.body, { code: 429, message: '429: Too Many Requests' });
    assert.equal(refused.headers['retry-after'], '50');
    assert.equal(refused.headers['ratelimit-policy'], '"test-allow";q=3;w=60');
    assert.equal(refused.headers.ratelimit, '"test-allow";r=0;t=50');
    assert.equal(seen.backendCalls, 3);
  });

  it('counts each header value apart', async () => {
    const { app } = stageApp(stage, labelledMappingRecord());
    const res = await request(app.callback()).get('/').set('X-Gateway-Test-Allow', 'another-value');
    assert.equal(res.status, 200);
  });

  it('limits per user from the X-Travel-User the auth stage set', async () => {
    const { app } = stageApp(stage, labelledMappingRecord());
    const res = await request(app.callback()).get('/').set('X-Demo-User', 'carol');
    assert.equal(res.status, 200);
    assert.equal(res.headers['ratelimit-policy'], '"per-user";q=60;w=60');
    assert.equal(res.headers.ratelimit, '"per-user";r=59;t=50');
  });

  it('does not ask the service when no label applies', async () => {
    const limiter = fakeLimiter(async () => ({ overallCode: 'OVER_LIMIT', statuses: [] }));
    const s = createRateLimitStage(rateLimitRecord(), modulesOf(limiter), { logger: memoryLogger() });
    const { app, seen } = stageApp(s, labelledMappingRecord());
    assert.equal((await request(app.callback()).get('/')).status, 200);
    const unlabelled = stageApp(s, labelledMappingRecord({ labels: undefined }));
    assert.equal((await request(unlabelled.app.callback()).get('/').set('X-Gateway-Test-Allow', '1')).status, 200);
    assert.equal(limiter.asked.length, 0);
    assert.equal(seen.backendCalls, 1);
  });

  it('matches a limit written for a UTF-8 value, such as a user name the auth service sends', async () => {
    const service = createRateLimitService({
      limits: [
        {
          domain: 'gateway',
          descriptors: [
            { key: 'user', value: 'josé', rate_limit: { name: 'jose', unit: 'minute', requests_per_unit: 1 } },
          ],
        },
      ],
      logger: memoryLogger(),
      now: () => T0,
    });
    const s = createRateLimitStage(rateLimitRecord(), modulesOf(service), { logger: memoryLogger() });
    const { app } = stageApp(s, labelledMappingRecord());
    const jose = Buffer.from('josé', 'utf8').toString('latin1');
    const codes = [];
    for (let i = 0; i < 2; i++) codes.push((await request(app.callback()).get('/').set('X-Demo-User', jose)).status);
    assert.deepEqual(codes, [200, 429]);
  });

  it('sends the record domain and the descriptors to the service', async () => {
    const limiter = fakeLimiter(async () => ({ overallCode: 'OK', statuses: [] }));
    const s = createRateLimitStage(rateLimitRecord({ domain: 'edge' }), modulesOf(limiter), { logger: memoryLogger() });
    const { app } = stageApp(s, labelledMappingRecord({ labels: { edge: DEMO_LABELS.gateway } }));
    await request(app.callback()).get('/').set('X-Gateway-Test-Allow', 'v').set('X-Demo-User', 'dan');
    assert.deepEqual(limiter.asked, [
      {
        domain: 'edge',
        descriptors: [
          { entries: [{ key: 'x-gateway-test-allow', value: 'v' }] },
          { entries: [{ key: 'user', value: 'dan' }] },
        ],
      },
    ]);
  });
});

describe('rate-limit stage when the service fails', () => {
  const failing = () => fakeLimiter(() => Promise.reject(new Error('store down')));
  let release: (() => void)[] = [];
  const hanging = () =>
    fakeLimiter(
      () =>
        new Promise<RateLimitResponse>((resolve) => {
          release.push(() => resolve({ overallCode: 'OVER_LIMIT', statuses: [] }));
        }),
    );
  afterEach(() => {
    for (const r of release) r();
    release = [];
  });

  it('lets requests through, counts the failures and logs once per burst', async () => {
    const logger = memoryLogger();
    const s = createRateLimitStage(rateLimitRecord(), modulesOf(failing()), { logger });
    const { app, seen } = stageApp(s, labelledMappingRecord());
    for (let i = 0; i < 3; i++)
      assert.equal((await request(app.callback()).get('/').set('X-Demo-User', 'a')).status, 200);
    assert.equal(seen.backendCalls, 3);
    assert.equal(s.stats().failures, 3);
    assert.equal(logger.lines.length, 1);
    assert.equal(logger.lines[0].level, 'warn');
  });

  it('answers 500 with the error body under failure_mode_deny', async () => {
    const s = createRateLimitStage(rateLimitRecord({ failure_mode_deny: true }), modulesOf(failing()), {
      logger: memoryLogger(),
    });
    const { app, seen } = stageApp(s, labelledMappingRecord());
    const res = await request(app.callback()).get('/').set('X-Demo-User', 'a');
    assert.equal(res.status, 500);
    assert.equal(res.body.code, 500);
    assert.equal(res.body.message, '500: Internal Server Error');
    assert.equal(seen.backendCalls, 0);
  });

  it('stops waiting for a slow in-process service at timeout_ms', async () => {
    for (const deny of [false, true]) {
      const s = createRateLimitStage(
        rateLimitRecord({ timeout_ms: 30, failure_mode_deny: deny }),
        modulesOf(hanging()),
        { logger: memoryLogger() },
      );
      const { app } = stageApp(s, labelledMappingRecord());
      // The service never answers: only timeout_ms can end the wait.
      const res = await request(app.callback()).get('/').set('X-Demo-User', 'a');
      assert.equal(res.status, deny ? 500 : 200);
    }
  });
});
