import assert from 'node:assert/strict';
import Koa from 'koa';
import { register as globalRegistry } from 'prom-client';
import request from 'supertest';
import { errorHandler, HttpError } from '../../src/http';
import { createMetrics, metricsHandler } from '../../src/telemetry';

describe('telemetry/metrics', () => {
  it('keeps its metrics in a registry of its own, so that many can be built in one process', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.recordAuth('allowed');
    assert.notEqual(a.registry, b.registry);
    assert.notEqual(a.registry, globalRegistry);
    assert.equal(globalRegistry.getSingleMetric('gatehouse_auth_decisions_total'), undefined);
    assert.match(await a.registry.metrics(), /gatehouse_auth_decisions_total\{result="allowed"\} 1/);
    assert.match(await b.registry.metrics(), /gatehouse_auth_decisions_total\{result="allowed"\} 0/);
  });

  it('exports every decision and reload outcome from the start, at zero', async () => {
    const text = await createMetrics({ processMetrics: false }).registry.metrics();
    for (const result of ['allowed', 'denied', 'error', 'bypassed']) {
      assert.match(text, new RegExp(`gatehouse_auth_decisions_total\\{result="${result}"\\} 0`));
    }
    for (const result of ['ok', 'over_limit', 'error']) {
      assert.match(text, new RegExp(`gatehouse_ratelimit_decisions_total\\{result="${result}"\\} 0`));
    }
    for (const result of ['success', 'failure']) {
      assert.match(text, new RegExp(`gatehouse_config_reloads_total\\{result="${result}"\\} 0`));
    }
  });

  it('counts requests by route, method and status and observes their duration', async () => {
    const metrics = createMetrics({ processMetrics: false });
    metrics.recordRequest('hotels', 'GET', 200, 0.003);
    metrics.recordRequest('hotels', 'GET', 200, 0.2);
    metrics.recordRequest('hotels', 'POST', 201, 0.01);
    metrics.recordRequest('cars', 'GET', 404, 0.001);
    const text = await metrics.registry.metrics();
    assert.match(
      text,
      /gatehouse_http_requests_total\{route="hotels",method="GET",status="200",protocol="HTTP\/1\.1"\} 2/,
    );
    assert.match(
      text,
      /gatehouse_http_requests_total\{route="hotels",method="POST",status="201",protocol="HTTP\/1\.1"\} 1/,
    );
    assert.match(
      text,
      /gatehouse_http_requests_total\{route="cars",method="GET",status="404",protocol="HTTP\/1\.1"\} 1/,
    );
    assert.match(text, /gatehouse_http_request_duration_seconds_count\{route="hotels",method="GET"\} 2/);
    assert.match(text, /gatehouse_http_request_duration_seconds_bucket\{le="0.005",route="hotels",method="GET"\} 1/);
  });

  it('shows every request recorded before a scrape, across batches and scrapes, none twice', async () => {
    const metrics = createMetrics({ processMetrics: false });
    for (let i = 0; i < 1000; i++) metrics.recordRequest('hotels', 'GET', 200, i % 2 === 0 ? 0.002 : 0.02);
    metrics.recordAuth('allowed');
    let text = await metrics.registry.metrics();
    assert.match(
      text,
      /gatehouse_http_requests_total\{route="hotels",method="GET",status="200",protocol="HTTP\/1\.1"\} 1000/,
    );
    assert.match(text, /gatehouse_http_request_duration_seconds_count\{route="hotels",method="GET"\} 1000/);
    assert.match(text, /gatehouse_http_request_duration_seconds_bucket\{le="0.0025",route="hotels",method="GET"\} 500/);
    const sum = Number(
      /gatehouse_http_request_duration_seconds_sum\{route="hotels",method="GET"\} (\S+)/.exec(text)?.[1],
    );
    assert.ok(Math.abs(sum - 11) < 1e-9, `sum ${sum}`);
    assert.match(text, /gatehouse_auth_decisions_total\{result="allowed"\} 1/);
    metrics.recordRequest('hotels', 'GET', 200, 0.002);
    text = await metrics.registry.metrics();
    assert.match(
      text,
      /gatehouse_http_requests_total\{route="hotels",method="GET",status="200",protocol="HTTP\/1\.1"\} 1001/,
    );
    assert.match(text, /gatehouse_http_request_duration_seconds_count\{route="hotels",method="GET"\} 1001/);
    assert.match(text, /gatehouse_auth_decisions_total\{result="allowed"\} 1\n/);
  });

  it('counts an unusual method as OTHER so that clients cannot grow the label set', async () => {
    const metrics = createMetrics({ processMetrics: false });
    metrics.recordRequest('hotels', 'PROPFIND', 405, 0.001);
    assert.match(
      await metrics.registry.metrics(),
      /route="hotels",method="OTHER",status="405",protocol="HTTP\/1\.1"\} 1/,
    );
  });

  it('counts auth, rate-limit, upstream and reload outcomes', async () => {
    const metrics = createMetrics({ processMetrics: false });
    metrics.recordAuth('denied');
    metrics.recordAuth('denied');
    metrics.recordRateLimit('over_limit');
    metrics.recordUpstreamError('hotels', 'timeout');
    metrics.recordUpstreamError('hotels', 'refused');
    metrics.recordUpstreamError('hotels', 'timeout');
    metrics.recordUpstreamRetry('hotels');
    metrics.recordUpstreamOverflow('cluster_hotels', 'max_pending_requests');
    metrics.recordUpstreamEjection('cluster_hotels');
    metrics.recordConfigReload('failure');
    const text = await metrics.registry.metrics();
    assert.match(text, /gatehouse_upstream_retries_total\{route="hotels"\} 1/);
    assert.match(text, /gatehouse_upstream_overflows_total\{cluster="cluster_hotels",limit="max_pending_requests"\} 1/);
    assert.match(text, /gatehouse_upstream_ejections_total\{cluster="cluster_hotels"\} 1/);
    assert.match(text, /gatehouse_auth_decisions_total\{result="denied"\} 2/);
    assert.match(text, /gatehouse_ratelimit_decisions_total\{result="over_limit"\} 1/);
    assert.match(text, /gatehouse_upstream_errors_total\{route="hotels",kind="timeout"\} 2/);
    assert.match(text, /gatehouse_upstream_errors_total\{route="hotels",kind="refused"\} 1/);
    assert.match(text, /gatehouse_config_reloads_total\{result="failure"\} 1/);
  });

  it('collects the process metrics into the same registry, under the prefix', async () => {
    const text = await createMetrics({ prefix: 'edge_' }).registry.metrics();
    assert.match(text, /^edge_process_cpu_user_seconds_total /m);
    assert.match(text, /^edge_nodejs_eventloop_lag_seconds /m);
    assert.match(text, /^# TYPE edge_http_requests_total counter$/m);
    assert.doesNotMatch(text, /gatehouse_/);
  });

  describe('metricsHandler', () => {
    const metrics = createMetrics({ processMetrics: false });
    const app = new Koa();
    app.use(metricsHandler(metrics));
    metrics.recordRateLimit('ok');

    it('serves the text exposition with the registry content type', async () => {
      const res = await request(app.callback()).get('/metrics').expect(200);
      assert.equal(res.headers['content-type'], metrics.registry.contentType);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(res.text, /# TYPE gatehouse_ratelimit_decisions_total counter/);
      assert.match(res.text, /gatehouse_ratelimit_decisions_total\{result="ok"\} 1/);
    });

    it('answers 405 with Allow to other methods', async () => {
      const res = await request(app.callback()).post('/metrics').expect(405);
      assert.equal(res.headers.allow, 'GET, HEAD');
    });

    it('refuses other methods with an HttpError, so that an error handler in front writes the error body', async () => {
      let thrown: unknown;
      const guarded = new Koa();
      guarded.use(errorHandler());
      guarded.use(async (_ctx, next) => {
        try {
          await next();
        } catch (err) {
          thrown = err;
          throw err;
        }
      });
      guarded.use(metricsHandler(metrics));
      const res = await request(guarded.callback()).delete('/metrics').expect(405);
      assert.ok(thrown instanceof HttpError && thrown.status === 405, String(thrown));
      assert.equal(res.headers.allow, 'GET, HEAD');
      assert.deepEqual(res.body, { code: 405, message: '405: Method Not Allowed' });
    });
  });
});
