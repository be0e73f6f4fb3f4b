/**
 * @module tracing/provider
 * OpenTelemetry put together from {@link TracingSettings}: the official
 * trace SDK with its sampler, its batch processor behind the bounded queue,
 * and the export thread with the official OTLP exporter of the protocol
 * asked for: HTTP with protobuf or JSON, or gRPC (./export). Loaded only
 * when tracing is on.
 */
import type { Sampler } from '@opentelemetry/sdk-trace-base';
import { DecidedIds } from './decided-ids';
import { BoundedProcessor, CountingExporter, ThreadExporter, type ExportCounts } from './export';
import { createPropagation } from './propagation';
import { createRequestTracer } from './request-trace';
import type { SamplerName, TracingSettings } from './settings';
import { RELOAD_SPAN, type RequestTracer } from './types';

type Sdk = typeof import('@opentelemetry/sdk-trace-base');

/** Tracing that runs: the tracer of requests, and the way to stop it. */
export interface RunningTracing {
  readonly requests: RequestTracer;
  /** Exports what waits, within the batch processor's export timeout. */
  flush(): Promise<void>;
  /** Exports what waits, then stops; later spans are dropped. */
  shutdown(): Promise<void>;
  /** How long one export may take: a stop waits no longer for the collector. */
  readonly timeoutMs: number;
}

/** The sampler `name` stands for. */
function samplerOf(sdk: Sdk, name: SamplerName, ratio: number): Sampler {
  const root = name.endsWith('always_on')
    ? new sdk.AlwaysOnSampler()
    : name.endsWith('always_off')
      ? new sdk.AlwaysOffSampler()
      : new sdk.TraceIdRatioBasedSampler(ratio);
  return name.startsWith('parentbased_') ? new sdk.ParentBasedSampler({ root }) : root;
}

/** `inner`, but a config reload's span is always recorded: reloads are rare, and an operator looks for them. */
function recordingReloads(sdk: Sdk, inner: Sampler, name: SamplerName): Sampler {
  if (name.endsWith('always_off')) return inner;
  return {
    shouldSample: (context, traceId, spanName, kind, attributes, links) =>
      spanName === RELOAD_SPAN
        ? { decision: sdk.SamplingDecision.RECORD_AND_SAMPLED }
        : inner.shouldSample(context, traceId, spanName, kind, attributes, links),
    toString: () => inner.toString(),
  };
}

/** Builds tracing from `settings`, counting what becomes of the spans in `counts`. */
export function startTracing(settings: TracingSettings, counts: ExportCounts, version: string): RunningTracing {
  const sdk = require('@opentelemetry/sdk-trace-base') as Sdk;
  const resources = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const batch = settings.batch;
  // The exporter tells the queue in front of the processor how many spans left it.
  const queue: { bounded?: BoundedProcessor } = {};
  const exporter = new CountingExporter(new ThreadExporter(settings), counts, (n) => queue.bounded?.settled(n));
  const processor = new sdk.BatchSpanProcessor(exporter, {
    scheduledDelayMillis: batch.scheduleDelayMs,
    exportTimeoutMillis: batch.exportTimeoutMs,
    maxQueueSize: batch.maxQueueSize,
    maxExportBatchSize: Math.min(batch.maxExportBatchSize, batch.maxQueueSize),
  });
  const bounded = (queue.bounded = new BoundedProcessor(processor, batch.maxQueueSize, counts));
  const resource = resources.defaultResource().merge(
    resources.resourceFromAttributes({
      ...settings.resource,
      'service.name': settings.serviceName,
      'service.version': version,
    }),
  );
  const requestSampler = samplerOf(sdk, settings.sampler, settings.ratio);
  const ids = new DecidedIds();
  const sampler = recordingReloads(sdk, ids.sampler(requestSampler), settings.sampler);
  const provider = new sdk.BasicTracerProvider({ resource, sampler, idGenerator: ids, spanProcessors: [bounded] });
  const requests = createRequestTracer({
    tracer: provider.getTracer('gatehouse', version),
    // A request's span is never a reload's: its sampling skips that question.
    sampler: requestSampler,
    ids,
    propagation: createPropagation(settings.propagators),
    tags: settings.tags,
    headerTags: settings.headerTags,
  });
  return {
    requests,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
    timeoutMs: settings.timeoutMs,
  };
}
