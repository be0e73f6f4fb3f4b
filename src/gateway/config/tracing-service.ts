/**
 * @module gateway/config/tracing-service
 * The fields of a `TracingService` record, as Emissary's: `service` (the
 * OTLP collector, over gRPC), `driver` (only `opentelemetry`: the others
 * are refused with the reason), `sampling`, `custom_tags` (and the older
 * `tag_headers`), `propagation_modes` and `config.service_name`. A tag that
 * would read a credential (`Authorization`, `Cookie`) is refused.
 */
import { z } from 'zod';
import { HEADER_NAME } from './headers';
import { AMBASSADOR_ID_IN_CODE } from './mapping-emissary';

/** Headers whose values are credentials: no span attribute is ever read from them. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);

/** A header a tag reads: a name, or one of HTTP/2's pseudo-headers as Emissary writes them. */
const taggedHeader = z
  .string()
  .refine((name) => HEADER_NAME.test(name) || [':authority', ':path', ':method', ':scheme'].includes(name), {
    message: 'must be an HTTP header name, or :authority, :path, :method or :scheme',
  })
  .transform((name) => name.toLowerCase())
  .refine((name) => !CREDENTIAL_HEADERS.has(name), {
    message: 'carries credentials: it is never written into a span',
  });

const percent = z.number().min(0, 'must be a percentage from 0 to 100').max(100, 'must be a percentage from 0 to 100');

const DRIVERS =
  'spans are sent over OTLP; for Zipkin, Datadog or another backend, point service at an OpenTelemetry Collector that exports to it';

/** One of Emissary's `custom_tags`: a fixed value, an environment variable's, or a request header's. */
const customTag = z
  .strictObject({
    tag: z.string().min(1),
    literal: z.strictObject({ value: z.string() }).optional(),
    environment: z.strictObject({ name: z.string().min(1), default_value: z.string().optional() }).optional(),
    request_header: z.strictObject({ name: taggedHeader, default_value: z.string().optional() }).optional(),
  })
  .refine((t) => [t.literal, t.environment, t.request_header].filter((s) => s !== undefined).length === 1, {
    message: 'needs exactly one of literal, environment or request_header',
  });

/** The fields of a TracingService besides apiVersion, kind and name. */
export const tracingServiceFields = {
  /** The collector: `host:port` (plaintext gRPC, as Emissary sends it), or an `http://` / `https://` URL. */
  service: z.string().min(1),
  driver: z.string().refine((d) => d === 'opentelemetry', {
    error: (issue) => `'${String(issue.input)}' is not supported, only opentelemetry: ${DRIVERS}`,
  }),
  sampling: z
    .strictObject({
      /** The percentage of new traces sampled. */
      random: percent.optional(),
      /** The most, in percent, that may be sampled whatever else says. */
      overall: percent.optional(),
      /** Read, without effect: `x-client-trace-id` is not read. */
      client: percent.optional(),
    })
    .default({}),
  custom_tags: z.array(customTag).default([]),
  /** Emissary's older way of tagging request headers. */
  tag_headers: z.array(taggedHeader).default([]),
  propagation_modes: z
    .array(
      z.enum(['TRACE_CONTEXT', 'B3'], {
        error:
          'must be TRACE_CONTEXT or B3: the ENVOY and LIGHTSTEP headers are not read or written (x-request-id passes as it is)',
      }),
    )
    .optional(),
  config: z
    .strictObject({
      /** `service.name` of the spans; default the OTEL_SERVICE_NAME option. */
      service_name: z.string().min(1).optional(),
    })
    .default({}),
  /** Read, without effect: spans are counted in the Prometheus metrics. */
  stats_name: z.string().optional(),
  ambassador_id: z.never({ error: `not supported: ${AMBASSADOR_ID_IN_CODE}` }).optional(),
};
