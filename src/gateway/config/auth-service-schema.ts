/**
 * @module gateway/config/auth-service-schema
 * The zod schema of the `AuthService` record, with its defaults, the Emissary
 * fields it refuses, and the checks of fields that contradict each other.
 */
import { z } from 'zod';
import { FRAMING_HEADERS } from '../../http';
import { HEADER_VALUE } from './headers';
import { AMBASSADOR_ID_IN_CODE } from './mapping-emissary';
import { circuitBreaker } from './mapping-upstream';
import { headerName, recordBase, timeoutMs } from './record-fields';

/** A status to answer with: a final one, since a 1xx answer leaves the client waiting for another. */
const statusCode = z
  .number()
  .int('must be a whole HTTP status')
  .min(200, 'must be a final HTTP status (200 to 599): the client would wait for ever after a 1xx')
  .max(599, 'must be an HTTP status (200 to 599)');

/** Headers of the check request that the gateway writes itself: `add_auth_headers` may not set them. */
const SET_BY_GATEWAY = new Set([...FRAMING_HEADERS, 'expect']);

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
