import assert from 'node:assert/strict';
import Koa from 'koa';
import request from 'supertest';
import { createCorsPolicies } from '../../src/cors';
import { createDiagModule, describeGateway } from '../../src/diag';
import { errorHandler, HttpError, ORIGINAL_PATH } from '../../src/http';
import { accessLog, createLogger, createMetrics, createRouteCounters, metricsHandler } from '../../src/telemetry';
import { captureLog } from '../support/log-capture';
import { BUILT_IN, sampleConfig } from '../support/diag-sample';

/**
 * The operator modules in the order a gateway installs them: access log,
 * error handler, route match, CORS, auth, then the routed module.
 */
/** A stand-in gateway with its own log, metrics and counters, so that each test counts only its own requests. */
function wiredGateway() {
  const out = captureLog();
  const logger = createLogger({ destination: out, level: 'info' });
  const metrics = createMetrics({ processMetrics: false });
  const counters = createRouteCounters();
  const config = sampleConfig();
  const diagMapping = config.mappings.find((m) => m.name === 'diag')!;
  const cors = createCorsPolicies();
  const diag = createDiagModule({
    snapshot: () =>
      describeGateway({
        version: 'test',
        startedAt: new Date(),
        config,
        configDir: 'config',
        loadedAt: new Date(),
        modules: BUILT_IN,
        counters,
      }),
  });
  const diagMiddleware = diag.app!.middleware;

  const app = new Koa();
  app.silent = true;
  app.use(accessLog({ logger, metrics, counters }));
  app.use(errorHandler());
  app.use(async (ctx, next) => {
    if (ctx.path === '/gateway/v0/metrics') return metricsHandler(metrics)(ctx, next);
    // Route match: only the diag mapping in this stand-in.
    if (!ctx.path.startsWith(diagMapping.prefix)) throw new HttpError(404);
    ctx.state.mapping = diagMapping;
    ctx.state[ORIGINAL_PATH] = ctx.path;
    const policy = cors.forMapping(diagMapping);
    if (policy) return policy(ctx, next);
    return next();
  });
  app.use(async (ctx, next) => {
    // Auth stand-in: a Basic header for "ops".
    if (ctx.get('Authorization') !== 'Basic b3BzOm9wcw==')
      throw new HttpError(401, undefined, { headers: { 'WWW-Authenticate': 'Basic' } });
    ctx.request.headers['x-travel-user'] = 'ops';
    await next();
  });
  app.use(async (ctx) => {
    const path = ctx.path;
    ctx.path = path.slice(diagMapping.prefix.length) || '/';
    const step = (i: number): Promise<void> =>
      i < diagMiddleware.length ? Promise.resolve(diagMiddleware[i](ctx, () => step(i + 1))) : Promise.resolve();
    try {
      await step(0);
    } finally {
      ctx.path = path;
    }
  });
  return { server: app.callback(), out };
}

describe('diag, cors and telemetry wired as in the gateway', () => {
  it('answers a preflight for the diag page without credentials', async () => {
    const { server, out } = wiredGateway();
    const res = await request(server)
      .options('/gateway/v0/diag/')
      .set('Origin', 'https://ops.example')
      .set('Access-Control-Request-Method', 'GET')
      .expect(204);
    assert.equal(res.headers['access-control-allow-origin'], 'https://ops.example');
    const [line] = await out.requests(1);
    assert.equal(line.route, 'diag');
    assert.equal(line.status, 204);
  });

  it('keeps the page behind auth, with CORS headers on the 401', async () => {
    const { server, out } = wiredGateway();
    const res = await request(server).get('/gateway/v0/diag/').set('Origin', 'https://ops.example').expect(401);
    assert.equal(res.headers['www-authenticate'], 'Basic');
    assert.equal(res.headers['access-control-allow-origin'], 'https://ops.example');
    const [line] = await out.requests(1);
    assert.equal(line.status, 401);
  });

  it('shows on the page and in the metrics the requests the access log counted', async () => {
    const { server, out } = wiredGateway();
    await request(server)
      .options('/gateway/v0/diag/')
      .set('Origin', 'https://ops.example')
      .set('Access-Control-Request-Method', 'GET')
      .expect(204);
    await request(server).get('/gateway/v0/diag/').expect(401);
    const res = await request(server)
      .get('/gateway/v0/diag/?json=true')
      .set('Authorization', 'Basic b3BzOm9wcw==')
      .expect(200);
    const route = res.body.routes.find((r: { name: string }) => r.name === 'diag');
    // The preflight and the 401 above; this request is counted once it is answered.
    assert.deepEqual([route.requests, route.clientErrors, route.errors], [2, 1, 0]);
    const lines = await out.requests(3);
    assert.deepEqual(
      lines.map((l) => [l.status, l.user]),
      [
        [204, undefined],
        [401, undefined],
        [200, 'ops'],
      ],
    );
    const scrape = await request(server).get('/gateway/v0/metrics').expect(200);
    assert.match(
      scrape.text,
      /gatehouse_http_requests_total\{route="diag",method="OPTIONS",status="204",protocol="HTTP\/1\.1"\} 1/,
    );
    assert.match(
      scrape.text,
      /gatehouse_http_requests_total\{route="diag",method="GET",status="401",protocol="HTTP\/1\.1"\} 1/,
    );
    assert.match(
      scrape.text,
      /gatehouse_http_requests_total\{route="diag",method="GET",status="200",protocol="HTTP\/1\.1"\} 1/,
    );
  });
});
