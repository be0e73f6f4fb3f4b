/**
 * @module gatehouse/options/tracing-options
 * The tracing options, declared with the rest (./declarations spreads them
 * in): the standard `OTEL_*` variables, read by the gateway itself so that
 * a wrong value is refused at start with the variable's name, and their
 * kinds: a collector URL, `key=value` lists, a ratio, a list of propagators.
 */
import { z } from 'zod';
import { dataRecord } from '../../files';
import { OTLP_PROTOCOLS, PROPAGATORS, SAMPLERS, type PropagatorName } from '../../tracing/settings';
import { option } from './declaration';
import { boolean, integer, milliseconds, oneOf, text, type Kind } from './kinds';

/** An http:// or https:// URL, which may hold credentials: a refusal never quotes it. */
const collectorUrl: Kind<string> = {
  must: 'an http:// or https:// URL (http://collector:4318)',
  schema: z.string().refine((url) => {
    try {
      const parsed = new URL(url);
      return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== '';
    } catch {
      return false;
    }
  }),
  types: ['string'],
  read: (value) => value.trim(),
  placeholder: '<url>',
  secret: (value) => {
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(value)?.[1];
    return scheme !== undefined && !/^https?$/i.test(scheme) ? `the scheme ${scheme.toLowerCase()}://` : 'no URL';
  },
};

const PAIR_KEY = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

/** `k1=v1,k2=v2`, values percent-encoded, as the OTLP exporter's variables are written; undefined when malformed. */
export function readPairs(text: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const part of text.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    if (eq === -1) return undefined;
    const key = part.slice(0, eq).trim();
    let value: string;
    try {
      value = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return undefined;
    }
    if (!PAIR_KEY.test(key) || /[\r\n\0]/.test(value)) return undefined;
    out[key] = value;
  }
  return out;
}

/** A list of `key=value` pairs; `secret`: its values are never quoted (API keys). */
function pairs(what: string, secret: boolean): Kind<Record<string, string>> {
  return {
    must: `a list of key=value pairs, comma-separated, values percent-encoded (${what})`,
    schema: dataRecord(z.string().regex(PAIR_KEY), z.string().regex(/^[^\r\n\0]*$/)),
    types: ['object'],
    read: readPairs,
    placeholder: '<pairs>',
    ...(secret ? { secret: () => 'a list that cannot be read' } : {}),
  };
}

/** A number from 0 to 1. */
const ratio: Kind<number> = {
  must: 'a number from 0 to 1',
  schema: z.number().min(0).max(1),
  types: ['number'],
  read: (value) => (/^\s*(?:0|1|0?\.[0-9]+|1\.0*|0\.)\s*$/.test(value) ? Number(value) : undefined),
  placeholder: '<ratio>',
};

/** A comma-separated list of propagators. */
const propagatorList: Kind<PropagatorName[]> = {
  must: `a comma-separated list of ${PROPAGATORS.join(', ')}`,
  schema: z.array(z.enum(PROPAGATORS)).min(1),
  types: ['array'],
  read: (value) =>
    value
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== ''),
  placeholder: '<list>',
  show: (value) => value.join(','),
};

const TRACING = '([tracing](#tracing))';

export const TRACING_OPTIONS = {
  otlpEndpoint: option({
    kind: collectorUrl,
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    shown: 'no tracing',
    help: 'trace requests and send the spans to this OTLP collector (/v1/traces is added over HTTP)',
    more: TRACING,
    commands: ['start'],
  }),
  otlpTracesEndpoint: option({
    kind: collectorUrl,
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    shown: 'the endpoint above',
    help: 'the same, the URL taken as it is',
    commands: ['start'],
  }),
  otlpProtocol: option({
    kind: oneOf(OTLP_PROTOCOLS),
    env: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    default: 'http/protobuf',
    help: 'how spans are sent: http/protobuf, http/json or grpc',
    commands: ['start'],
  }),
  otlpTracesProtocol: option({
    kind: oneOf(OTLP_PROTOCOLS),
    env: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
    default: (o) => o.otlpProtocol as (typeof OTLP_PROTOCOLS)[number],
    shown: 'the protocol above',
    help: 'the same, for traces alone',
    commands: ['start'],
  }),
  otlpHeaders: option({
    kind: pairs('api-key=secret', true),
    env: 'OTEL_EXPORTER_OTLP_HEADERS',
    shown: 'none',
    help: 'headers (gRPC metadata) sent with every export, such as an API key; never logged',
    commands: ['start'],
  }),
  otlpTracesHeaders: option({
    kind: pairs('api-key=secret', true),
    env: 'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
    shown: 'none',
    help: 'more headers for traces, over those above',
    commands: ['start'],
  }),
  otlpTimeoutMs: option({
    kind: milliseconds(1),
    env: 'OTEL_EXPORTER_OTLP_TIMEOUT',
    default: 10_000,
    help: 'how long one export may take, in ms',
    commands: ['start'],
  }),
  resourceAttributes: option({
    kind: pairs('deployment.environment.name=prod', false),
    env: 'OTEL_RESOURCE_ATTRIBUTES',
    shown: 'none',
    help: 'attributes of every span’s resource',
    commands: ['start'],
  }),
  serviceName: option({
    kind: text('a name', '<name>'),
    env: 'OTEL_SERVICE_NAME',
    default: (o) => (o.resourceAttributes as Record<string, string> | undefined)?.['service.name'] ?? 'gatehouse',
    shown: '`gatehouse`',
    help: 'service.name of every span',
    commands: ['start'],
  }),
  tracesSampler: option({
    kind: oneOf(SAMPLERS),
    env: 'OTEL_TRACES_SAMPLER',
    default: 'parentbased_always_on',
    help: "which requests are traced: parentbased_* follow the client's sampled flag, and sample new traces as the rest of the name says",
    commands: ['start'],
  }),
  tracesSamplerArg: option({
    kind: ratio,
    env: 'OTEL_TRACES_SAMPLER_ARG',
    default: 1,
    help: 'the ratio of new traces sampled by traceidratio and parentbased_traceidratio',
    commands: ['start'],
  }),
  propagators: option({
    kind: propagatorList,
    env: 'OTEL_PROPAGATORS',
    default: ['tracecontext', 'baggage'] as PropagatorName[],
    help: 'the headers that carry the trace context: tracecontext (W3C), b3 (one header), b3multi (x-b3-*); baggage passes through always',
    commands: ['start'],
  }),
  bspScheduleDelayMs: option({
    kind: milliseconds(0),
    env: 'OTEL_BSP_SCHEDULE_DELAY',
    default: 5000,
    help: 'how long spans wait to be sent in a batch, in ms',
    commands: ['start'],
  }),
  bspExportTimeoutMs: option({
    kind: milliseconds(1),
    env: 'OTEL_BSP_EXPORT_TIMEOUT',
    default: 30_000,
    help: 'how long one batch may take before the next goes, in ms',
    commands: ['start'],
  }),
  bspMaxQueueSize: option({
    kind: integer(1),
    env: 'OTEL_BSP_MAX_QUEUE_SIZE',
    default: 2048,
    help: 'the most spans waiting to be sent; more are dropped and counted (trace_spans_dropped_total)',
    commands: ['start'],
  }),
  bspMaxExportBatchSize: option({
    kind: integer(1),
    env: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
    default: 512,
    help: 'the most spans sent in one export; at most the queue size',
    commands: ['start'],
  }),
  sdkDisabled: option({
    kind: boolean,
    env: 'OTEL_SDK_DISABLED',
    default: false,
    help: 'true: no tracing, whatever else says so',
    commands: ['start'],
  }),
};
