/**
 * The export thread: batches serialized on the gateway's thread and sent
 * from a thread of their own, whichever transport, and a thread started
 * again after it ended.
 */
import assert from 'node:assert/strict';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ExportResult } from '@opentelemetry/core';
import { ThreadExporter, type ExporterSettings } from '../../../src/tracing/export';
import { useOtlpCollector } from '../../support/otlp/collector';

describe('tracing export thread', function () {
  const collector = useOtlpCollector();

  /** Ends one span named `name` through `exporter` and resolves with how its export ended. */
  function exportOne(exporter: ThreadExporter, name: string): Promise<ExportResult> {
    return new Promise((resolve) => {
      const results: ExportResult[] = [];
      const provider = new BasicTracerProvider({
        spanProcessors: [
          new SimpleSpanProcessor({
            export: (spans, done) =>
              exporter.export(spans, (result) => {
                results.push(result);
                done(result);
                resolve(result);
              }),
            shutdown: () => Promise.resolve(),
          }),
        ],
      });
      const span = provider.getTracer('thread-test').startSpan(name, { attributes: { 'test.name': name } });
      span.end();
    });
  }

  const settings = (protocol: ExporterSettings['protocol']): ExporterSettings => ({
    endpoint: protocol === 'grpc' ? collector.grpcUrl : `${collector.httpUrl}/v1/traces`,
    protocol,
    headers: { 'x-api-key': 'thread-secret' },
    timeoutMs: 10_000,
  });

  for (const protocol of ['http/protobuf', 'http/json', 'grpc'] as const) {
    it(`sends what it serialized over ${protocol}, with the export headers`, async () => {
      const exporter = new ThreadExporter(settings(protocol));
      try {
        const name = `thread-${protocol}`;
        const result = await exportOne(exporter, name);
        assert.equal(result.code, 0, String(result.error));
        const spans = await collector.waitFor((s) => s.some((x) => x.name === name));
        const span = spans.find((x) => x.name === name)!;
        assert.equal(span.attributes['test.name'], name);
        assert.equal(span.via, protocol);
        assert.ok(collector.exports.some((e) => e.via === protocol && e.headers['x-api-key'] === 'thread-secret'));
      } finally {
        await exporter.shutdown();
      }
    });
  }

  it('starts a new thread for the next batch once its thread ended', async () => {
    const exporter = new ThreadExporter(settings('http/protobuf'));
    try {
      assert.equal((await exportOne(exporter, 'before-stop')).code, 0);
      await exporter.shutdown();
      assert.equal((await exportOne(exporter, 'after-stop')).code, 0);
      const spans = await collector.waitFor((s) => s.some((x) => x.name === 'after-stop'));
      assert.ok(spans.some((x) => x.name === 'before-stop'));
    } finally {
      await exporter.shutdown();
    }
  });

  it('fails a batch the collector cannot take, and goes on', async () => {
    const dead = new ThreadExporter({
      ...settings('http/protobuf'),
      endpoint: 'http://127.0.0.1:1/v1/traces',
      timeoutMs: 2000,
    });
    try {
      const result = await exportOne(dead, 'nowhere');
      assert.equal(result.code, 1);
      assert.ok(result.error instanceof Error && result.error.message.length > 0);
    } finally {
      await dead.shutdown();
    }
  });
});
