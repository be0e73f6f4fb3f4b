/**
 * Emissary's TracingService as the gateway's record: opentelemetry served
 * with its sampling, tags and service name; the other drivers, the Envoy
 * propagation modes and tags that would read a credential refused.
 */
import assert from 'node:assert/strict';
import { asResources, loaded, notesOf, problems, type Fixture } from '../../../support/emissary';

const tracing = (spec: Record<string, unknown>): Fixture => ({ kind: 'TracingService', name: 'tracing', spec });

describe('an Emissary TracingService', () => {
  it('becomes a TracingService record with its fields, the client sampling said to be ignored', () => {
    const result = loaded(
      asResources(
        tracing({
          service: 'otel-collector.monitoring:4317',
          driver: 'opentelemetry',
          sampling: { overall: 10, client: 100 },
          custom_tags: [{ tag: 'cluster', literal: { value: 'eu-1' } }],
          tag_headers: ['x-tenant'],
          propagation_modes: ['TRACE_CONTEXT', 'B3'],
          config: { service_name: 'edge' },
          stats_name: 'tracing',
        }),
      ),
    );
    const record = result.config.tracingService!;
    assert.equal(record.service, 'otel-collector.monitoring:4317');
    assert.deepEqual(record.sampling, { overall: 10, client: 100 });
    assert.deepEqual(record.propagation_modes, ['TRACE_CONTEXT', 'B3']);
    assert.equal(record.config.service_name, 'edge');
    assert.deepEqual(notesOf(result, 'tracing'), [
      'spec.tag_headers: read as custom_tags of those request headers',
      'spec.stats_name: ignored: spans dropped and exported are counted in the Prometheus metrics',
      'spec.sampling.client: ignored: x-client-trace-id is not read; random and overall choose the new traces sampled',
    ]);
  });

  it('refuses another driver, the Envoy propagation mode and a tag of a credential header, saying why', () => {
    const texts = problems(
      asResources(
        tracing({
          service: 'zipkin:9411',
          driver: 'zipkin',
          propagation_modes: ['ENVOY'],
          custom_tags: [{ tag: 'who', request_header: { name: 'Authorization' } }],
          tag_headers: ['cookie'],
        }),
      ),
    );
    assert.deepEqual(texts, [
      "config/emissary.yaml: TracingService tracing: spec.driver: 'zipkin' is not supported, only opentelemetry: spans are sent over OTLP; for Zipkin, Datadog or another backend, point service at an OpenTelemetry Collector that exports to it",
      'config/emissary.yaml: TracingService tracing: spec.custom_tags.0.request_header.name: carries credentials: it is never written into a span',
      'config/emissary.yaml: TracingService tracing: spec.tag_headers.0: carries credentials: it is never written into a span',
      'config/emissary.yaml: TracingService tracing: spec.propagation_modes.0: must be TRACE_CONTEXT or B3: the ENVOY and LIGHTSTEP headers are not read or written (x-request-id passes as it is)',
    ]);
  });
});
