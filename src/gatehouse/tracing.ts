/**
 * @module gatehouse/tracing
 * A Gatehouse's tracing settings, from the `OTEL_*` options and the config
 * folder's TracingService: tracing is on when an endpoint is given or a
 * TracingService says where spans go. The fields a TracingService sets win
 * (its `service` is the collector, over gRPC; its sampling, tags and
 * service name); the options give the rest.
 */
import type { TracingServiceRecord } from '../gateway';
import { OptionError, type ResolvedOptions } from './options';
import type { HeaderTag, PropagatorName, TracingSettings } from '../tracing';

/** The options tracing reads. */
export type TracingOptionValues = Pick<
  ResolvedOptions,
  | 'otlpEndpoint'
  | 'otlpTracesEndpoint'
  | 'otlpTracesProtocol'
  | 'otlpHeaders'
  | 'otlpTracesHeaders'
  | 'otlpTimeoutMs'
  | 'resourceAttributes'
  | 'serviceName'
  | 'tracesSampler'
  | 'tracesSamplerArg'
  | 'propagators'
  | 'bspScheduleDelayMs'
  | 'bspExportTimeoutMs'
  | 'bspMaxQueueSize'
  | 'bspMaxExportBatchSize'
  | 'sdkDisabled'
>;

/** The traces URL of an OTLP/HTTP endpoint: `/v1/traces` after its path, as the specification says. */
function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/** A TracingService's `service`: a URL as it is, a bare `host:port` as plaintext gRPC. */
function collectorOf(service: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(service) ? service : `http://${service}`;
}

/** Throws when the batch settings contradict each other; the SDK would quietly change one. */
function checkBatch(options: TracingOptionValues): void {
  if (options.bspMaxExportBatchSize > options.bspMaxQueueSize) {
    throw new OptionError(
      `OTEL_BSP_MAX_EXPORT_BATCH_SIZE: must be at most OTEL_BSP_MAX_QUEUE_SIZE (${options.bspMaxQueueSize}) (got "${options.bspMaxExportBatchSize}")`,
      'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
    );
  }
}

/** The tags of a TracingService: fixed values now, request headers per request. */
function tagsOf(
  record: TracingServiceRecord,
  env: NodeJS.ProcessEnv,
): { tags: Record<string, string>; headerTags: HeaderTag[] } {
  const tags: Record<string, string> = {};
  const headerTags: HeaderTag[] = [];
  for (const tag of record.custom_tags) {
    if (tag.literal) tags[tag.tag] = tag.literal.value;
    else if (tag.environment) {
      const value = env[tag.environment.name] ?? tag.environment.default_value;
      if (value !== undefined) tags[tag.tag] = value;
    } else if (tag.request_header) {
      headerTags.push({ tag: tag.tag, header: tag.request_header.name, fallback: tag.request_header.default_value });
    }
  }
  for (const header of record.tag_headers) headerTags.push({ tag: header, header });
  return { tags, headerTags };
}

/** The propagators of Emissary's `propagation_modes`; baggage always passes. */
function modesOf(modes: readonly ('TRACE_CONTEXT' | 'B3')[]): PropagatorName[] {
  return modes.map((mode) => (mode === 'B3' ? 'b3multi' : 'tracecontext'));
}

/**
 * The settings of tracing, or null when it is off. Throws an
 * {@link OptionError} when options contradict each other.
 */
export function tracingSettings(
  options: TracingOptionValues,
  record?: TracingServiceRecord,
  env: NodeJS.ProcessEnv = process.env,
): TracingSettings | null {
  checkBatch(options);
  if (options.sdkDisabled) return null;
  const endpoint =
    record !== undefined
      ? collectorOf(record.service)
      : (options.otlpTracesEndpoint ??
        (options.otlpEndpoint === undefined
          ? undefined
          : options.otlpTracesProtocol === 'grpc'
            ? options.otlpEndpoint
            : tracesUrl(options.otlpEndpoint)));
  if (endpoint === undefined) return null;
  const sampling = record?.sampling;
  // Emissary's random and overall, in percent: the smaller is the ratio of new traces sampled.
  const ratio =
    sampling?.random !== undefined || sampling?.overall !== undefined
      ? Math.min(sampling.random ?? 100, sampling.overall ?? 100) / 100
      : undefined;
  const tagged = record ? tagsOf(record, env) : { tags: {}, headerTags: [] };
  return {
    endpoint,
    // Emissary's opentelemetry driver speaks gRPC to its collector.
    protocol: record !== undefined ? 'grpc' : options.otlpTracesProtocol,
    headers: { ...options.otlpHeaders, ...options.otlpTracesHeaders },
    timeoutMs: options.otlpTimeoutMs,
    serviceName: record?.config.service_name ?? options.serviceName,
    resource: { ...options.resourceAttributes },
    sampler: ratio !== undefined ? 'parentbased_traceidratio' : options.tracesSampler,
    ratio: ratio ?? options.tracesSamplerArg,
    propagators: record?.propagation_modes ? modesOf(record.propagation_modes) : options.propagators,
    batch: {
      scheduleDelayMs: options.bspScheduleDelayMs,
      exportTimeoutMs: options.bspExportTimeoutMs,
      maxQueueSize: options.bspMaxQueueSize,
      maxExportBatchSize: options.bspMaxExportBatchSize,
    },
    ...tagged,
  };
}

/** Tracing as the start line says it: where spans go (the URL without credentials or query), how, and what is sampled. */
export function describeTracing(settings: TracingSettings | null): string {
  if (settings === null) return 'off';
  let where = settings.endpoint;
  try {
    const url = new URL(settings.endpoint);
    where = `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    // Read as a URL when it was given: kept as it is otherwise.
  }
  const ratio = settings.sampler.endsWith('traceidratio') ? ` ${settings.ratio}` : '';
  return `${settings.protocol} to ${where}, ${settings.sampler}${ratio}`;
}
