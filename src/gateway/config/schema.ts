/**
 * @module gateway/config/schema
 * The zod schemas of the configuration records (`Mapping`, `AuthService`,
 * `RateLimitService`, `Module`, `TracingService`) with their defaults, and the types inferred
 * from them.
 */
import { z } from 'zod';
import { corsSchema } from '../../cors';
import { addedHeadersSchema, HEADER_NAME, HEADER_VALUE, matchedHeadersSchema, removedHeadersSchema } from './headers';
import { API_VERSION } from './api-version';
import { labelsSchema } from './labels';
import { AMBASSADOR_ID_IN_CODE, emissaryMappingChecks, emissaryMappingFields } from './mapping-emissary';
import { MAX_REGEX_MAX_SIZE } from '../match/regex';
import { mappingMatchChecks, matchMappingFields, normaliseMatchFields } from './mapping-match';
import { circuitBreaker, upstreamMappingChecks, upstreamMappingFields } from './mapping-upstream';
import { cidrProblem } from '../request/address-filter';
import { errorOverridesSchema } from './error-overrides';
import { tracingServiceFields } from './tracing-service';
import {
  clientCertModuleFields,
  type HostRecord,
  type SecretRecord,
  type TlsContextRecord,
  type TlsRecord,
} from './tls';

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

const headerName = z
  .string()
  .regex(HEADER_NAME, 'must be an HTTP header name')
  .transform((h) => h.toLowerCase());

const timeoutMs = (fallback: number) => z.number().int().positive().max(600_000).default(fallback);

const recordBase = {
  apiVersion: z.literal(API_VERSION, { error: `must be ${API_VERSION}` }),
  name: z.string().min(1),
};

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

/** A status to answer with: a final one, since a 1xx answer leaves the client waiting for another. */
const statusCode = z
  .number()
  .int('must be a whole HTTP status')
  .min(200, 'must be a final HTTP status (200 to 599): the client would wait for ever after a 1xx')
  .max(599, 'must be an HTTP status (200 to 599)');

/** Headers of the check request that the gateway writes itself: `add_auth_headers` may not set them. */
const SET_BY_GATEWAY = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'expect',
]);

/** An Emissary AuthService field that this gateway has no counterpart for: refused, saying why. */
const notSupported = (why: string) => z.never({ error: `not supported: ${why}` }).optional();

/** What no single field can say is wrong with an AuthService: fields that contradict each other. */
function authServiceChecks(
  r: {
    auth_service: string;
    include_body: unknown;
    allow_request_body: boolean;
    add_auth_headers: Record<string, string>;
    tls?: boolean | string;
    proto: 'http' | 'grpc';
    protocol_version?: 'v2' | 'v3';
    path_prefix: string;
  },
  ctx: z.RefinementCtx,
): void {
  const problem = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  if (r.include_body !== null && r.allow_request_body)
    problem(['allow_request_body'], 'give include_body or allow_request_body, not both');
  for (const name of Object.keys(r.add_auth_headers)) {
    if (SET_BY_GATEWAY.has(name)) problem(['add_auth_headers', name], 'is set by the gateway itself');
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(r.auth_service)?.[1].toLowerCase();
  const tls = r.tls === true || (typeof r.tls === 'string' && r.tls !== '');
  if (tls && scheme === 'http')
    problem(['tls'], `${r.tls === true ? 'true' : 'a TLSContext'} contradicts the http:// of auth_service`);
  if (r.tls === false && scheme === 'https') problem(['tls'], 'false contradicts the https:// of auth_service');
  if (r.proto === 'grpc') {
    if (r.protocol_version === 'v2') {
      problem(
        ['protocol_version'],
        'must be v3 for proto: grpc: the gateway calls envoy.service.auth.v3.Authorization/Check; v2 is the API Envoy no longer speaks, and Emissary 3 refuses it too',
      );
    }
    if (r.path_prefix !== '')
      problem(['path_prefix'], 'is for proto: http alone: a gRPC check carries the path in its request');
  }
}

export const authServiceSchema = z
  .strictObject({
    ...recordBase,
    kind: z.literal('AuthService'),
    auth_service: z.string().min(1),
    /** `http`: the request is passed on to the auth service; `grpc`: Envoy's ext_authz `Check` (v3). */
    proto: z.enum(['http', 'grpc'], { error: 'must be http or grpc' }).default('http'),
    // The built-in auth service names the user in X-Travel-User; a record that
    // says nothing passes that on (and a client's own is always dropped).
    allowed_authorization_headers: z.array(headerName).default(['x-travel-user']),
    allowed_request_headers: z.array(headerName).default([]),
    path_prefix: z
      .string()
      .refine((p) => p === '' || p.startsWith('/'), 'must be empty or start with /')
      .default(''),
    timeout_ms: timeoutMs(5000),
    /** A status, or Emissary's `{code: <status>}`. */
    status_on_error: z.union([statusCode, z.strictObject({ code: statusCode }).transform((s) => s.code)]).default(403),
    failure_mode_allow: z.boolean().default(false),
    /** The first `max_bytes` of the request body go to the auth service; `null` (the default): none. */
    include_body: z
      .strictObject({
        max_bytes: z
          .number()
          .int('must be a whole number of bytes above 0')
          .positive('must be a whole number of bytes above 0')
          .max(16 * 1024 * 1024, 'must be at most 16777216 (16 MiB)'),
        allow_partial: z.boolean(),
      })
      .nullable()
      .default(null),
    /** Emissary's older spelling of `include_body: {max_bytes: 4096, allow_partial: true}`. */
    allow_request_body: z.boolean().default(false),
    /** Headers added to every check request, over the client's of the same name. */
    add_auth_headers: z
      .record(headerName, z.string().regex(HEADER_VALUE, 'must be a header value (no control characters)'))
      .default({}),
    /** Adds `l5d-dst-override: <host>:<port>` of the auth service, for Linkerd. */
    add_linkerd_headers: z.boolean().default(false),
    /**
     * `true`: TLS to a `host:port` auth service, as `https://` would, checked
     * against the system's certificate authorities; the name of a TLSContext:
     * TLS with that context's client certificate, authorities and SNI.
     */
    tls: z.union([z.boolean(), z.string()]).optional(),
    /** For `proto: grpc`, `v3` (or left out); `v2` is refused. Without effect for http, as in Emissary. */
    protocol_version: z.enum(['v2', 'v3']).optional(),
    ambassador_id: notSupported(AMBASSADOR_ID_IN_CODE),
    stats_name: notSupported('auth decisions are counted in the Prometheus metrics; remove the field'),
    /** Bounds the checks under way, as Envoy's breakers bound the auth service's cluster: one past them is the service failing. */
    circuit_breakers: z.array(circuitBreaker).min(1, 'must list at least one set of thresholds').optional(),
    v2ExplicitTLS: notSupported('remove the field'),
  })
  .superRefine(authServiceChecks);

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

/** One rule of `ip_allow` / `ip_deny`: `{peer: <cidr>}` or `{remote: <cidr>}`. */
const addressRule = z
  .strictObject({ peer: z.string().optional(), remote: z.string().optional() })
  .superRefine((rule, ctx) => {
    const given = [
      rule.peer === undefined ? [] : ['peer', rule.peer],
      rule.remote === undefined ? [] : ['remote', rule.remote],
    ].filter((g) => g.length > 0);
    if (given.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: 'a rule is one of {peer: <address or CIDR>} or {remote: <address or CIDR>}',
      });
      return;
    }
    const problem = cidrProblem(given[0][1]);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: [given[0][0]], message: problem });
  });

/**
 * Gateway-wide settings, as Emissary's `Module` holds them:
 * `config: {cors: <policy>}` applies to every Mapping without a `cors` of its
 * own; `regex_max_size` bounds the Mappings' regular expressions.
 */
export const moduleSchema = z.strictObject({
  ...recordBase,
  kind: z.literal('Module'),
  config: z
    .strictObject({
      cors: corsSchema.optional(),
      /** Bodies for answers of these statuses, on every Mapping without its own list. */
      error_response_overrides: errorOverridesSchema.optional(),
      /** Only requests from these addresses are served (a 403 for the rest), before auth. */
      ip_allow: z.array(addressRule).optional(),
      /** Requests from these addresses are refused with a 403, before auth. */
      ip_deny: z.array(addressRule).optional(),
      /** `true`: no `x-envoy-*` header is added to an answer (`x-envoy-ratelimited` on a 429 of the rate-limit service). */
      suppress_envoy_headers: z.boolean().optional(),
      /** `true`: gRPC-Web calls (`application/grpc-web*`) to a `grpc: true` Mapping are translated to gRPC, as Envoy's grpc_web filter does. */
      enable_grpc_web: z.boolean().optional(),
      /** The largest program (RE2 instructions) a Mapping's regular expression may compile to, as Emissary's `regex_max_size`; default 200, at most 20 000. */
      regex_max_size: z
        .number()
        .int('must be a whole number of instructions')
        .positive('must be a whole number of instructions')
        .max(
          MAX_REGEX_MAX_SIZE,
          `must be at most ${MAX_REGEX_MAX_SIZE}: a larger program holds the event loop while it is compiled`,
        )
        .optional(),
      // What upstreams are told of a client's certificate (./tls/client-cert-fields).
      ...clientCertModuleFields,
    })
    .default({})
    .refine((c) => c.ip_allow === undefined || c.ip_deny === undefined, {
      message: 'give ip_allow or ip_deny, not both (as Emissary takes one)',
      path: ['ip_deny'],
    }),
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
