/**
 * Where spans go and what becomes of them: each OTLP transport, the
 * headers sent with exports, sampling, B3, and a collector that is dead
 * or slow, which costs the requests nothing.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { close } from '../support/server';
import { freePort } from '../support/ports';
import { DEMO_CONFIG } from '../support/config-folder';
import { eventually } from '../support/polling';
import { startGatehouse } from '../support/gatehouse';
import { useOtlpCollector } from '../support/otlp/collector';

describe('tracing export', function () {
  const collector = useOtlpCollector();

  const transports = [
    ['http/protobuf', () => ({ otlpEndpoint: collector.httpUrl })],
    ['http/json', () => ({ otlpEndpoint: collector.httpUrl, otlpProtocol: 'http/json' as const })],
    ['grpc', () => ({ otlpEndpoint: collector.grpcUrl, otlpProtocol: 'grpc' as const })],
  ] as const;
  for (const [protocol, options] of transports) {
    it(`sends spans over ${protocol}, with the OTEL headers and service name`, async () => {
      const running = await startGatehouse({
        configDir: DEMO_CONFIG,
        ...options(),
        otlpHeaders: { 'x-api-key': 'collector-secret' },
        serviceName: `edge-${protocol}`,
        bspScheduleDelayMs: 20,
      });
      try {
        const res = await fetch(`${running.url}/gateway/v0/check_alive`);
        assert.equal(res.status, 200);
        const spans = await collector.waitFor((s) => s.some((x) => x.resource['service.name'] === `edge-${protocol}`));
        const span = spans.find((x) => x.resource['service.name'] === `edge-${protocol}`)!;
        assert.equal(span.via, protocol);
        assert.equal(span.kind, 'SERVER');
        assert.equal(span.attributes['url.path'], '/gateway/v0/check_alive');
        const sent = collector.exports.find((e) => e.via === protocol)!;
        assert.equal(sent.headers['x-api-key'], 'collector-secret');
      } finally {
        await running.stop();
      }
    });
  }

  it('samples new traces at the ratio asked, and none at 0, still passing the context on', async () => {
    const running = await startGatehouse({
      configDir: DEMO_CONFIG,
      otlpEndpoint: collector.httpUrl,
      tracesSampler: 'parentbased_traceidratio',
      tracesSamplerArg: 0,
      serviceName: 'never-sampled',
      bspScheduleDelayMs: 20,
    });
    try {
      for (let i = 0; i < 20; i++) assert.equal((await fetch(`${running.url}/nowhere/${i}`)).status, 404);
      // A client's sampled trace is followed whatever the ratio.
      const res = await fetch(`${running.url}/nowhere/sampled`, {
        headers: { traceparent: '00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbb-01' },
      });
      assert.equal(res.status, 404);
      const spans = await collector.waitFor((s) => s.some((x) => x.traceId === 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'));
      assert.deepEqual(
        spans.filter((s) => s.resource['service.name'] === 'never-sampled').map((s) => s.attributes['url.path']),
        ['/nowhere/sampled'],
      );
    } finally {
      await running.stop();
    }
  });

  it('decides each new trace on its own random id as the SDK sampler does, and exports exactly those it samples', async () => {
    const running = await startGatehouse({
      configDir: DEMO_CONFIG,
      otlpEndpoint: collector.httpUrl,
      tracesSampler: 'parentbased_traceidratio',
      tracesSamplerArg: 0.5,
      serviceName: 'half-sampled',
      bspScheduleDelayMs: 20,
    });
    try {
      const count = 60;
      for (let i = 0; i < count; i++) {
        const res = await fetch(`${running.url}/gateway/v0/check_alive`, { headers: { 'x-request-id': `half-${i}` } });
        assert.equal(res.status, 200);
      }
      const lines = await running.log.waitForLines(count, (l) => String(l.req_id).startsWith('half-'));
      const traceIds = lines.map((l) => String(l.trace_id));
      for (const id of traceIds) assert.match(id, /^(?!0{32})[0-9a-f]{32}$/);
      for (const line of lines) assert.match(String(line.span_id), /^(?!0{16})[0-9a-f]{16}$/);
      assert.equal(new Set(traceIds).size, count, 'every request a trace id of its own');
      const sdk = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
      const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
      const reference = new sdk.TraceIdRatioBasedSampler(0.5);
      const sampled = traceIds.filter(
        (id) => reference.shouldSample(api.ROOT_CONTEXT, id).decision === sdk.SamplingDecision.RECORD_AND_SAMPLED,
      );
      assert.ok(sampled.length > 0 && sampled.length < count, `some of ${count} sampled at 0.5: ${sampled.length}`);
      const spans = await collector.waitFor((s) => sampled.every((id) => s.some((x) => x.traceId === id)));
      const exported = new Set(
        spans.filter((s) => s.resource['service.name'] === 'half-sampled').map((s) => s.traceId),
      );
      assert.deepEqual([...exported].sort(), [...sampled].sort());
    } finally {
      await running.stop();
    }
  });

  it('reads and writes B3 headers when asked', async () => {
    const running = await startGatehouse({
      configDir: DEMO_CONFIG,
      otlpEndpoint: collector.httpUrl,
      propagators: ['b3multi'],
      serviceName: 'b3',
      bspScheduleDelayMs: 20,
    });
    try {
      await fetch(`${running.url}/gateway/v0/check_alive`, {
        headers: {
          'x-b3-traceid': 'cccccccccccccccccccccccccccccccc',
          'x-b3-spanid': 'dddddddddddddddd',
          'x-b3-sampled': '1',
        },
      });
      const spans = await collector.waitFor((s) => s.some((x) => x.traceId === 'cccccccccccccccccccccccccccccccc'));
      const span = spans.find((x) => x.traceId === 'cccccccccccccccccccccccccccccccc')!;
      assert.equal(span.parentSpanId, 'dddddddddddddddd');
    } finally {
      await running.stop();
    }
  });

  for (const [what, endpoint] of [
    ['dead', async () => ({ url: `http://127.0.0.1:${await freePort()}`, server: undefined })],
    [
      'silent',
      async () => {
        // Takes every export and never answers it.
        const server: Server = createServer(() => undefined);
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
      },
    ],
  ] as const) {
    it(`answers every request while the collector is ${what}, and counts the spans dropped`, async () => {
      const { url, server } = await endpoint();
      const running = await startGatehouse({
        configDir: DEMO_CONFIG,
        otlpEndpoint: url,
        otlpTimeoutMs: 200,
        bspScheduleDelayMs: 10,
        bspMaxQueueSize: 8,
        bspMaxExportBatchSize: 4,
      });
      try {
        for (let i = 0; i < 40; i++) assert.equal((await fetch(`${running.url}/gateway/v0/check_alive`)).status, 200);
        const dropped = async () => {
          const text = await (await fetch(`${running.url}/gateway/v0/metrics`)).text();
          const count = (reason: string) =>
            Number(
              new RegExp(`gatehouse_trace_spans_dropped_total\\{reason="${reason}"\\} (\\d+)`).exec(text)?.[1] ?? 0,
            );
          return { queueFull: count('queue_full'), exportFailed: count('export_failed') };
        };
        // Every span is dropped and counted, none waits past the bound: queued ones fail with their export.
        const seen = await eventually(async () => {
          const now = await dropped();
          return now.queueFull + now.exportFailed >= 40 ? now : undefined;
        }, 'the 40 spans counted as dropped');
        assert.equal(seen.queueFull + seen.exportFailed, 40);
        assert.equal(running.gatehouse.tracing.counts().exported, 0);
      } finally {
        await running.stop();
        await close(server);
      }
    });
  }
});
