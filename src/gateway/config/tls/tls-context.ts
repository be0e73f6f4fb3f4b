/**
 * @module gateway/config/tls/tls-context
 * The `TLSContext` record, Emissary's: the certificate a set of host names
 * is served with (`hosts`, `secret` or `cert_chain_file` and
 * `private_key_file`), how their clients are asked for certificates
 * (`ca_secret` or `cacert_chain_file`, `cert_required`), the protocol
 * versions, ALPN protocols, ciphers and curves, and, used by a Mapping's,
 * an AuthService's or a RateLimitService's `tls`, how an upstream is
 * called: the client certificate presented, the authorities its own is
 * checked against, and the `sni` sent. The settings are shared with a
 * Host's inline `tls`.
 */
import { z } from 'zod';
import type { SecureVersion } from 'node:tls';
import { API_VERSION } from '../api-version';
import { parseHostPattern } from '../../match/host-match';

/** Emissary's TLS versions, as OpenSSL names them. */
export const TLS_VERSIONS: Readonly<Record<string, SecureVersion>> = {
  'v1.0': 'TLSv1',
  'v1.1': 'TLSv1.1',
  'v1.2': 'TLSv1.2',
  'v1.3': 'TLSv1.3',
};

const version = z.enum(['v1.0', 'v1.1', 'v1.2', 'v1.3'], { error: 'must be v1.0, v1.1, v1.2 or v1.3' });

/** A Kubernetes namespace: an RFC 1123 label. */
export const namespaceField = z
  .string()
  .regex(
    /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
    'must be a Kubernetes namespace (lower-case letters, digits and -, at most 63)',
  );

/** An ALPN protocol name, as RFC 7301 registers them (`h2`, `http/1.1`). */
const ALPN_NAME = /^[!-~]{1,255}$/;

/** `alpn_protocols`: Emissary's comma-separated list (`h2,http/1.1`), or a list. */
const alpnProtocols = z
  .union([z.string(), z.array(z.string())])
  .transform((value) => (Array.isArray(value) ? value : value.split(',')).map((p) => p.trim()).filter(Boolean))
  .refine((list) => list.length > 0, 'must name at least one protocol (h2, http/1.1)')
  .refine((list) => list.every((p) => ALPN_NAME.test(p)), 'must be ALPN protocol names (h2, http/1.1)');

/** A list of OpenSSL names (ciphers, curves), as Emissary writes them. */
const names = (what: string) =>
  z
    .array(z.string().regex(/^[A-Za-z0-9_\-+.=@!|[\]]+$/, `must be ${what} as OpenSSL names them`))
    .min(1, `must name at least one of the ${what}`);

/** A file path of a certificate or key. */
const filePath = z.string().min(1, 'must be the path of a PEM file');

/** The settings of a TLS context, shared by `TLSContext` and a Host's inline `tls`. */
export const tlsSettingsFields = {
  /** The Secret (`kubernetes.io/tls`) of the certificate and key; `<name>.<namespace>` names another namespace. */
  secret: z.string().min(1).optional(),
  /** The certificate chain's file, instead of a Secret. */
  cert_chain_file: filePath.optional(),
  /** The key's file, with `cert_chain_file`. */
  private_key_file: filePath.optional(),
  /** The Secret of the authorities a client certificate is checked against (`tls.crt` or `ca.crt`). */
  ca_secret: z.string().min(1).optional(),
  /** The authorities' file, instead of a Secret. */
  cacert_chain_file: filePath.optional(),
  /** A client without a certificate the authorities vouch for is refused at the handshake. */
  cert_required: z.boolean().optional(),
  min_tls_version: version.optional(),
  max_tls_version: version.optional(),
  alpn_protocols: alpnProtocols.optional(),
  cipher_suites: names('ciphers').optional(),
  ecdh_curves: names('curves').optional(),
  /** The name sent as SNI to an upstream called with this context (and checked in its certificate). */
  sni: z
    .string()
    .regex(/^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$/, 'must be a host name')
    .optional(),
  /** A cleartext port whose requests for these hosts are redirected to HTTPS. */
  redirect_cleartext_from: z.number().int().min(1).max(65535, 'must be a port from 1 to 65535').optional(),
  /** `false`: a dot in a Secret's name is part of the name, not `<name>.<namespace>`. Default true. */
  secret_namespacing: z.boolean().optional(),
  crl_secret: z
    .never({ error: 'not supported: certificate revocation lists are not read; remove the field' })
    .optional(),
  crl_file: z.never({ error: 'not supported: certificate revocation lists are not read; remove the field' }).optional(),
};

/** A name a TLS context serves: exact, `*.example.com`, or `*`. */
export const servedName = z.string().transform((text, ctx) => {
  const parsed = parseHostPattern(text, true);
  if (parsed === null) return '*';
  if (typeof parsed === 'string' || parsed.port !== null || parsed.kind === 'prefix') {
    ctx.issues.push({
      code: 'custom',
      message: `'${text}' is not a name a certificate is served for: a host name, *.example.com, or *`,
      input: text,
    });
    return z.NEVER;
  }
  return parsed.kind === 'exact' ? parsed.name : `*${parsed.suffix}`;
});

type Settings = {
  secret?: string;
  cert_chain_file?: string;
  private_key_file?: string;
  ca_secret?: string;
  cacert_chain_file?: string;
  cert_required?: boolean;
  min_tls_version?: string;
  max_tls_version?: string;
};

/** What no single field can say is wrong with the settings: fields that contradict each other. */
export function tlsSettingsChecks(s: Settings, ctx: z.RefinementCtx): void {
  const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (s.secret !== undefined && s.cert_chain_file !== undefined)
    problem('cert_chain_file', 'give secret or cert_chain_file, not both');
  if (s.cert_chain_file !== undefined && s.private_key_file === undefined)
    problem('private_key_file', 'required with cert_chain_file');
  if (s.private_key_file !== undefined && s.cert_chain_file === undefined)
    problem('cert_chain_file', 'required with private_key_file');
  if (s.ca_secret !== undefined && s.cacert_chain_file !== undefined)
    problem('cacert_chain_file', 'give ca_secret or cacert_chain_file, not both');
  if (s.cert_required === true && s.ca_secret === undefined && s.cacert_chain_file === undefined)
    problem(
      'cert_required',
      'needs ca_secret (or cacert_chain_file): the authorities a client certificate is checked against',
    );
  const order = Object.keys(TLS_VERSIONS);
  if (
    s.min_tls_version !== undefined &&
    s.max_tls_version !== undefined &&
    order.indexOf(s.min_tls_version) > order.indexOf(s.max_tls_version)
  )
    problem('max_tls_version', `must not be below min_tls_version (${s.min_tls_version})`);
}

export const tlsContextSchema = z
  .strictObject({
    apiVersion: z.literal(API_VERSION, { error: `must be ${API_VERSION}` }),
    kind: z.literal('TLSContext'),
    name: z.string().min(1),
    namespace: namespaceField.optional(),
    /** The names whose connections are served with this context's certificate; none: a context for upstreams only. */
    hosts: z.array(servedName).optional(),
    ...tlsSettingsFields,
  })
  .superRefine(tlsSettingsChecks)
  .superRefine((c, ctx) => {
    if (c.hosts !== undefined && c.hosts.length > 0 && c.secret === undefined && c.cert_chain_file === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['hosts'],
        message: 'serves these names with no certificate: give secret (or cert_chain_file and private_key_file)',
      });
  });

export type TlsContextRecord = z.output<typeof tlsContextSchema>;
/** The settings of a TLS context, as a Host's inline `tls` holds them too. */
export type TlsSettings = Omit<TlsContextRecord, 'apiVersion' | 'kind' | 'name' | 'namespace' | 'hosts'>;
