/**
 * @module gateway/config/schema
 * The zod schemas of the configuration records (`Mapping`, `AuthService`,
 * `RateLimitService`, `Module`, `TracingService`) with their defaults, and the types inferred
 * from them; the AuthService's and the Module's are written in files of their own.
 */
import { z } from 'zod';
import { corsSchema } from '../../cors';
import { addedHeadersSchema, matchedHeadersSchema, removedHeadersSchema } from './headers';
import { API_VERSION } from './api-version';
import { labelsSchema } from './labels';
import { emissaryMappingChecks, emissaryMappingFields } from './mapping-emissary';
import { mappingMatchChecks, matchMappingFields, normaliseMatchFields } from './mapping-match';
import { upstreamMappingChecks, upstreamMappingFields } from './mapping-upstream';
import { tracingServiceFields } from './tracing-service';
import { authServiceSchema } from './auth-service-schema';
import { moduleSchema } from './module-schema';
import { recordBase, timeoutMs } from './record-fields';
import type { HostRecord, SecretRecord, TlsContextRecord, TlsRecord } from './tls';

export type { AddedHeader, HeaderCondition } from './headers';
export { allowedUpgrades } from './mapping-emissary';
export {
  describeLabel,
  groupLabels,
  isPseudoHeader,
  labelHeaders,
  labelsSchema,
  readLabel,
  type LabelGroup,
  type LabelSource,
  type LabelSpecifier,
} from './labels';
export type { QueryValue } from './mapping-match';

export { API_VERSION };
export { authServiceSchema, moduleSchema };

export const mappingSchema = z
  .strictObject({
    ...recordBase,
    kind: z.literal('Mapping'),
    /** A path prefix; with `prefix_regex`, a pattern (checked with it in mapping-match). */
    prefix: z.string().min(1),
    service: z.string().min(1),
    /** Replaces the matched prefix; `""` forwards the path unchanged. Default `/`. */
    rewrite: z
      .string()
      .refine((r) => r === '' || (r.startsWith('/') && !/[?#]/.test(r)), 'must be empty or a path starting with /')
      .default('/'),
    labels: labelsSchema.optional(),
    bypass_auth: z.boolean().default(false),
    /** For a remote upstream: how long to wait for its answer; 0 waits for ever, as in Emissary. */
    timeout_ms: z.number().int().nonnegative().max(600_000).default(3000),
    /** An HTTP method, in upper case; with `method_regex`, a pattern (checked with it in mapping-match). */
    method: z.string().min(1).optional(),
    /** Headers the request must carry to match: an exact value, or `true` for any value. */
    headers: matchedHeadersSchema.optional(),
    precedence: z.number().int().default(0),
    // Applied after the stages: the removals, then the additions, as Envoy does.
    add_request_headers: addedHeadersSchema(true).default({}),
    remove_request_headers: removedHeadersSchema(true).default([]),
    add_response_headers: addedHeadersSchema(false).default({}),
    remove_response_headers: removedHeadersSchema(false).default([]),
    cors: corsSchema.optional(),
    /** Lets through paths whose escapes are not UTF-8 or are encoded twice (`%C0%AE`, `%252e`), for a backend that reads them as they are. */
    allow_unsafe_path_escapes: z.boolean().default(false),
    // The fields that come from Emissary's Mapping (hostname...), read or refused by name.
    ...emissaryMappingFields,
    // Patterns, canary weights and redirects (mapping-match).
    ...matchMappingFields,
    // How a remote upstream is reached: namespace, retries, breakers, timeouts, balancing.
    ...upstreamMappingFields,
  })
  .superRefine(emissaryMappingChecks)
  .superRefine(mappingMatchChecks)
  .superRefine(upstreamMappingChecks)
  .transform(normaliseMatchFields);

export const rateLimitServiceSchema = z.strictObject({
  ...recordBase,
  kind: z.literal('RateLimitService'),
  service: z.string().min(1),
  domain: z.string().min(1).default('gateway'),
  timeout_ms: timeoutMs(20),
  failure_mode_deny: z.boolean().default(false),
  /**
   * `true`: TLS to the service, its certificate checked against the system's
   * certificate authorities; the name of a TLSContext: TLS with that
   * context's client certificate, authorities and SNI.
   */
  tls: z.union([z.boolean(), z.string()]).optional(),
  /**
   * `use_resource_exhausted_code`: a gRPC request over a limit is answered
   * RESOURCE_EXHAUSTED rather than UNAVAILABLE, as Emissary sets it; kept
   * for the gRPC proxying that reads it.
   */
  grpc: z.strictObject({ use_resource_exhausted_code: z.boolean().default(false) }).optional(),
  /** `v3`, or left out: the gateway asks over `envoy.service.ratelimit.v3`. */
  protocol_version: z
    .literal('v3', {
      error:
        'must be v3 (or left out): the gateway calls envoy.service.ratelimit.v3.RateLimitService; v2 is the API Envoy no longer speaks, and Emissary 3 refuses it too; envoyproxy/ratelimit and the built-in service answer v3',
    })
    .optional(),
});

/** Where spans are sent and how requests are sampled, as Emissary's TracingService with `driver: opentelemetry`. */
export const tracingServiceSchema = z.strictObject({
  ...recordBase,
  kind: z.literal('TracingService'),
  ...tracingServiceFields,
});

/** Any record, told apart by `kind`. */
export const recordSchema = z.discriminatedUnion('kind', [
  mappingSchema,
  authServiceSchema,
  rateLimitServiceSchema,
  moduleSchema,
  tracingServiceSchema,
]);

export type MappingRecord = z.output<typeof mappingSchema>;
export type AuthServiceRecord = z.output<typeof authServiceSchema>;
export type RateLimitServiceRecord = z.output<typeof rateLimitServiceSchema>;
export type ModuleRecord = z.output<typeof moduleSchema>;
export type TracingServiceRecord = z.output<typeof tracingServiceSchema>;
export type GatewayRecord = z.output<typeof recordSchema> | TlsRecord;

/** Where a record came from, for error messages and diag. */
export interface RecordSource {
  file: string;
  /** The Service manifest's `metadata.name`, when the record came from an annotation. */
  service?: string;
  /** The fields the record took from the defaults of Emissary's ambassador Module rather than wrote itself. */
  fromModule?: readonly string[];
}

/** A whole, valid configuration: what the gateway serves from. */
export interface GatewayConfig {
  mappings: MappingRecord[];
  authService?: AuthServiceRecord;
  rateLimitService?: RateLimitServiceRecord;
  /** The gateway-wide settings (the CORS policy), when a `Module` record gives them. */
  module?: ModuleRecord;
  /** The domains served, with their certificates (./tls). */
  hosts?: HostRecord[];
  tlsContexts?: TlsContextRecord[];
  /** The Kubernetes Secrets of the config folder: certificates and keys, never shown. */
  secrets?: SecretRecord[];
  /** Where spans go and which requests are sampled, when a `TracingService` record says. */
  tracingService?: TracingServiceRecord;
  /** The files it was read from. */
  sources: string[];
  /** Where each record came from, when it was read from files; for messages and diag. */
  recordSources?: ReadonlyMap<GatewayRecord, RecordSource>;
}
