/**
 * @module gateway/config/mapping-emissary
 * The Mapping fields that come from Emissary beyond the seed's: the host a
 * Mapping applies to (`hostname`, the older `host`; `host_regex` and the
 * other patterns are mapping-match's), the Host an upstream is
 * sent (`host_rewrite`), `case_sensitive`, the protocol upgrades it tunnels
 * (`allow_upgrade`, the older `use_websocket`), the harmless `docs`, and every
 * other field of Emissary's Mapping, refused by name with the reason, so that
 * a Mapping copied from Emissary's documentation says what to change instead
 * of "unknown field".
 */
import { z } from 'zod';
import { dataRecord } from '../../files';
import { formatHostPattern, parseHostPattern } from '../match/host-match';
import { errorOverridesSchema } from './error-overrides';
import { labelsField } from './tls';

/** A host pattern field: read in its normal form (lower case, no trailing dot) or refused with why. */
function hostField(globs: boolean) {
  return z.string().transform((text, ctx) => {
    const parsed = parseHostPattern(text, globs);
    if (typeof parsed === 'string') {
      ctx.issues.push({ code: 'custom', message: parsed, input: text });
      return z.NEVER;
    }
    return formatHostPattern(parsed);
  });
}

/** A `host[:port]` to send as Host: a name, an IPv4 or a bracketed IPv6 address. */
const HOST_PORT = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/** An Emissary Mapping field with no counterpart here: refused, saying why. */
const emissaryOnly = (why: string) => z.never({ error: `an Emissary field not supported here: ${why}` }).optional();

/** `ambassador_id` of a record given in code: records read from the config folder are selected by it before they get here. */
export const AMBASSADOR_ID_IN_CODE =
  'it selects which gateways serve a record of the config folder (the ambassadorId option); records given in code are all served: remove the field';

const ONE_UPSTREAM = 'a Mapping forwards to one upstream, as it is written; remove the field';

/** A protocol as the Upgrade header names it (RFC 9110 §7.8): a token, and an optional /version. */
const UPGRADE_PROTOCOL = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:\/[!#$%&'*+.^_`|~0-9A-Za-z-]+)?$/;

/** One protocol of `allow_upgrade`, in lower case, as the Upgrade header is compared. */
const upgradeProtocol = z
  .string()
  .regex(UPGRADE_PROTOCOL, 'must be a protocol as the Upgrade header names it (websocket)')
  .transform((p) => p.toLowerCase())
  .refine(
    (p) => p !== 'h2c' && !p.startsWith('h2c/'),
    "h2c is not proxied: the client's connection would become an HTTP/2 connection to the upstream, whose later requests no Mapping, auth or rate limit would see",
  );

/** The fields, spread into the Mapping schema. */
export const emissaryMappingFields = {
  /** The hosts the Mapping applies to: an Emissary DNS glob; `*` (the default) for any. */
  hostname: hostField(true).optional(),
  /** Emissary's older spelling: an exact host, as `hostname` without globs, or a pattern with `host_regex` (both read in mapping-match). */
  host: z.string().optional(),
  /** The Host a remote upstream is sent instead of its own `host:port`. */
  host_rewrite: z.string().regex(HOST_PORT, 'must be host or host:port').optional(),
  /** What the gateway does anyway for a remote upstream: it is sent its own host:port. */
  auto_host_rewrite: z
    .literal(true, {
      error:
        "must be true (or left out): a remote upstream is always sent its own host:port as Host, or host_rewrite; the client's Host goes in X-Forwarded-Host",
    })
    .optional(),
  /** `false`: the prefix matches in any case. */
  case_sensitive: z.boolean().default(true),
  /** Emissary's API documentation settings (developer portal, agent): accepted, no effect here. */
  docs: z
    .strictObject({
      path: z.string().optional(),
      url: z.string().optional(),
      ignored: z.boolean().optional(),
      display_name: z.string().optional(),
      timeout_ms: z.number().int().nonnegative().optional(),
    })
    .optional(),

  /** The protocols a request may upgrade its connection to (`websocket`), tunnelled to a remote upstream once it agrees. */
  allow_upgrade: z.array(upgradeProtocol).optional(),
  /** Emissary's older spelling of `allow_upgrade: [websocket]`. */
  use_websocket: z.boolean().optional(),
  ambassador_id: emissaryOnly(AMBASSADOR_ID_IN_CODE),
  /** `true`: the upstream speaks gRPC, and is called over HTTP/2 (h2c, or h2 over TLS for `https://`). */
  grpc: z.boolean().optional(),
  /** The TLSContext a remote upstream is called with: over TLS, its client certificate presented, its own checked. */
  tls: z
    .string({ error: 'must name a TLSContext; for TLS without one, write the service as https://host:port' })
    .min(1, 'must name a TLSContext')
    .optional(),
  /** The Mapping's own labels (its resource's metadata.labels), which a Host's mappingSelector selects by. */
  metadata_labels: labelsField.optional(),
  add_linkerd_headers: emissaryOnly('add l5d-dst-override yourself with add_request_headers'),
  rate_limits: emissaryOnly('Emissary v0 rate limits are not supported; use labels'),
  outlier_detection: emissaryOnly(
    "failing endpoints are ejected as Envoy's outlier detection does by default; remove the field",
  ),
  shadow: emissaryOnly(ONE_UPSTREAM),
  /** Emissary's default resolver is what the gateway does anyway; any other is refused. */
  resolver: z
    .literal('kubernetes-service', {
      error:
        'an Emissary field not supported here but for kubernetes-service, its default: names are looked up in DNS as Kubernetes resolves a Service; list addresses in endpoints, or remove the field',
    })
    .optional(),
  stats_name: emissaryOnly('requests are counted by Mapping name in the Prometheus metrics; remove the field'),
  /** Bodies for answers of these statuses, instead of the Module's. */
  error_response_overrides: errorOverridesSchema.optional(),
  /** `true`: no error body is overridden, not even by the Module's list. */
  bypass_error_response_overrides: z.boolean().optional(),
  /** Sent to an AuthService with `proto: grpc` as the check's `context_extensions`; an HTTP check carries none, as in Emissary. */
  auth_context_extensions: dataRecord(z.string(), z.string()).optional(),
  envoy_override: emissaryOnly('there is no Envoy to pass it to; remove the field'),
  modules: emissaryOnly('remove the field'),
};

/** What no single field can say is wrong with a Mapping's Emissary fields: fields that contradict each other. */
export function emissaryMappingChecks(
  m: {
    service: string;
    tls?: string;
    hostname?: string;
    host?: string;
    host_rewrite?: string;
    auto_host_rewrite?: true;
    allow_upgrade?: string[];
    use_websocket?: boolean;
    grpc?: boolean;
  },
  ctx: z.RefinementCtx,
): void {
  const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (m.tls !== undefined && /^http:\/\//i.test(m.service))
    problem('tls', 'a TLSContext contradicts the http:// of service');
  // Emissary logs an error and ignores host; here the record says what it means.
  if (m.hostname !== undefined && m.host !== undefined)
    problem('host', 'give hostname or host, not both (host is the older spelling of an exact hostname)');
  if (m.host_rewrite !== undefined && m.auto_host_rewrite !== undefined)
    problem('auto_host_rewrite', 'give host_rewrite or auto_host_rewrite, not both');
  if (m.allow_upgrade !== undefined && m.use_websocket !== undefined) {
    problem(
      'use_websocket',
      'give allow_upgrade or use_websocket, not both (use_websocket: true is allow_upgrade: [websocket])',
    );
  }
  if (m.grpc === true && (m.allow_upgrade !== undefined || m.use_websocket === true))
    problem('grpc', 'a gRPC call is no connection upgrade: give grpc or allow_upgrade (use_websocket), not both');
}

/** The protocols a Mapping lets a request upgrade to, in lower case: `allow_upgrade`, or `websocket` for `use_websocket: true`. */
export function allowedUpgrades(m: { allow_upgrade?: readonly string[]; use_websocket?: boolean }): readonly string[] {
  return m.allow_upgrade ?? (m.use_websocket === true ? ['websocket'] : []);
}
