/**
 * A Gatehouse's tracing settings: the OTEL_* variables, refused by name
 * when wrong; a TracingService in the config folder, Emissary's included,
 * followed across reloads; the reload and the database calls as spans.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OptionError, resolveOptions } from '../../src/gatehouse/options';
import { tracingSettings } from '../../src/gatehouse/tracing';
import { startOtlpCollector, useOtlpCollector } from '../support/otlp/collector';
import { ALICE } from '../support/credentials';
import { copyConfig, DEMO_CONFIG } from '../support/config-folder';
import { startGatehouse } from '../support/gatehouse';

function refusal(env: NodeJS.ProcessEnv): string {
  try {
    resolveOptions({ configDir: DEMO_CONFIG }, env);
  } catch (err) {
    assert.ok(err instanceof OptionError, String(err));
    return err.message;
  }
  assert.fail('the variables were accepted');
}

const EMISSARY_TRACING = (collector: string, extra = '') => `apiVersion: getambassador.io/v3alpha1
kind: TracingService
metadata:
  name: tracing
spec:
  service: ${collector}
  driver: opentelemetry
  sampling: {overall: 100}
  config: {service_name: edge-from-emissary}
  custom_tags:
    - tag: cluster
      literal: {value: eu-1}
    - tag: tenant
      request_header: {name: x-tenant, default_value: none}
${extra}`;

describe('gatehouse tracing settings', function () {
  it('refuse a wrong OTEL_* value at start, naming the variable and never quoting a header list', () => {
    assert.equal(
      refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }),
      'OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:// or https:// URL (http://collector:4318) (got no URL)',
    );
    assert.match(
      refusal({ OTEL_TRACES_SAMPLER: 'sometimes' }),
      /^OTEL_TRACES_SAMPLER: must be one of parentbased_always_on, /,
    );
    assert.equal(
      refusal({ OTEL_TRACES_SAMPLER_ARG: '1.5' }),
      'OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1 (got "1.5")',
    );
    assert.equal(
      refusal({ OTEL_EXPORTER_OTLP_HEADERS: 'api-key secret-value' }),
      'OTEL_EXPORTER_OTLP_HEADERS: must be a list of key=value pairs, comma-separated, values percent-encoded (api-key=secret) (got a list that cannot be read)',
    );
    assert.match(
      refusal({ OTEL_PROPAGATORS: 'tracecontext,jaeger' }),
      /^OTEL_PROPAGATORS: must be a comma-separated list of /,
    );
    assert.match(refusal({ OTEL_EXPORTER_OTLP_PROTOCOL: 'thrift' }), /^OTEL_EXPORTER_OTLP_PROTOCOL: must be one of /);
    assert.match(
      refusal({ OTEL_BSP_MAX_QUEUE_SIZE: '0' }),
      /^OTEL_BSP_MAX_QUEUE_SIZE: must be an integer of 1 or more/,
    );
    const options = resolveOptions(
      { configDir: DEMO_CONFIG },
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4096' },
    );
    assert.throws(
      () => tracingSettings(options),
      /^OptionError: OTEL_BSP_MAX_EXPORT_BATCH_SIZE: must be at most OTEL_BSP_MAX_QUEUE_SIZE \(2048\)/,
    );
  });

  it('read the endpoint as the specification says: /v1/traces added over HTTP, the traces endpoint as it is', () => {
    const read = (env: NodeJS.ProcessEnv) =>
      tracingSettings(resolveOptions({ configDir: DEMO_CONFIG }, env), undefined, env);
    assert.equal(read({}), null);
    assert.equal(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })?.endpoint, 'http://c:4318/v1/traces');
    assert.equal(
      read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })?.endpoint,
      'http://c:4317',
    );
    assert.equal(
      read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://t/x' })
        ?.endpoint,
      'https://t/x',
    );
    assert.equal(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }), null);
    const all = read({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%20b,x=1',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x=2',
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource,deployment.environment.name=prod',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_PROPAGATORS: 'tracecontext, b3',
    })!;
    assert.deepEqual(all.headers, { 'api-key': 'a b', x: '2' });
    assert.equal(all.serviceName, 'from-resource');
    assert.equal(all.sampler, 'parentbased_traceidratio');
    assert.equal(all.ratio, 0.25);
    assert.deepEqual(all.propagators, ['tracecontext', 'b3']);
  });

  describe('with a TracingService in the config folder', function () {
    const collector = useOtlpCollector();

    it('sends spans over gRPC to its service with its tags, follows a reload that removes it, and traces the reload', async () => {
      const config = copyConfig();
      const address = collector.grpcUrl.replace('http://', '');
      config.write('tracing.yaml', EMISSARY_TRACING(address));
      const running = await startGatehouse({ configDir: config.dir, bspScheduleDelayMs: 20 });
      try {
        const res = await fetch(`${running.url}/gateway/v0/check_alive`, { headers: { 'x-tenant': 'acme' } });
        assert.equal(res.status, 200);
        const spans = await collector.waitFor((s) =>
          s.some((x) => x.resource['service.name'] === 'edge-from-emissary'),
        );
        const span = spans.find((x) => x.resource['service.name'] === 'edge-from-emissary')!;
        assert.equal(span.via, 'grpc');
        assert.equal(span.attributes.cluster, 'eu-1');
        assert.equal(span.attributes.tenant, 'acme');

        config.unlink('tracing.yaml');
        assert.deepEqual(await running.gatehouse.reload(), { ok: true });
        assert.equal(running.gatehouse.tracing.requests, null);
        const reloads = await collector.waitFor((s) => s.some((x) => x.name === 'config reload'));
        const reload = reloads.find((x) => x.name === 'config reload')!;
        assert.equal(reload.parentSpanId, '');
        assert.equal(reload.attributes['gatehouse.reload.outcome'], 'success');
      } finally {
        await running.stop();
        config.remove();
      }
    });

    it('refuses another driver at start, saying why', async () => {
      const config = copyConfig();
      config.write('tracing.yaml', EMISSARY_TRACING('zipkin:9411').replace('opentelemetry', 'zipkin'));
      await assert.rejects(
        startGatehouse({ configDir: config.dir }),
        /spec\.driver: 'zipkin' is not supported, only opentelemetry: spans are sent over OTLP/,
      );
      config.remove();
    });
  });

  it('traces each bookings database call under the request that made it', async function () {
    const collector = await startOtlpCollector();
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-traced-data-'));
    const running = await startGatehouse({
      configDir: DEMO_CONFIG,
      dataDir,
      otlpEndpoint: collector.httpUrl,
      bspScheduleDelayMs: 20,
    });
    try {
      const res = await fetch(`${running.url}/v1/hotels/bookings/`, { headers: { authorization: ALICE } });
      assert.equal(res.status, 200);
      const spans = await collector.waitFor((s) => s.some((x) => x.attributes['db.operation.name'] === 'list'));
      const call = spans.find((x) => x.attributes['db.operation.name'] === 'list')!;
      const server = spans.find((x) => x.spanId === call.parentSpanId)!;
      assert.equal(server.kind, 'SERVER');
      assert.equal(server.attributes['url.path'], '/v1/hotels/bookings/');
      assert.equal(call.kind, 'CLIENT');
      assert.equal(call.name, 'list gatehouse.bookings');
      assert.equal(call.attributes['db.system.name'], 'postgresql');
      const auth = spans.find((x) => x.name === 'auth' && x.parentSpanId === server.spanId)!;
      assert.equal(auth.kind, 'INTERNAL');
      assert.equal(auth.attributes['gatehouse.auth.outcome'], 'allowed');
    } finally {
      await running.stop();
      await collector.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
