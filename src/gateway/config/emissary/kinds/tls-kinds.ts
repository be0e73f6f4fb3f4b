/**
 * @module gateway/config/emissary/kinds/tls-kinds
 * Emissary's Host and TLSContext as the gateway's records of the same
 * kinds (gateway/config/tls), which keep Emissary's field names. A Host's
 * `selector` is its older `mappingSelector`; its inline `tls` is read in
 * either spelling (`minTlsVersion` or `min_tls_version`); its
 * `acmeProvider` is not served (no certificate is requested by ACME); its
 * labels are kept for what they select.
 */
import { API_VERSION } from '../../schema';
import type { EmissaryResource, FieldNote, Translation } from '../types';
import { isPlainObject } from '../values';

/** Emissary's camelCase spellings of the inline `tls` of a Host, as it maps them. */
const SNAKE: Readonly<Record<string, string>> = {
  alpnProtocols: 'alpn_protocols',
  cipherSuites: 'cipher_suites',
  ecdhCurves: 'ecdh_curves',
  redirectCleartextFrom: 'redirect_cleartext_from',
  certRequired: 'cert_required',
  minTlsVersion: 'min_tls_version',
  maxTlsVersion: 'max_tls_version',
  certChainFile: 'cert_chain_file',
  privateKeyFile: 'private_key_file',
  cacertChainFile: 'cacert_chain_file',
  crlSecret: 'crl_secret',
  crlFile: 'crl_file',
  caSecret: 'ca_secret',
};

const NOT_ACME =
  'not served: no certificate is requested by ACME (an Ambassador Edge Stack feature); give the certificate in tlsSecret, a Secret cert-manager or certbot keeps renewed';

function snakeCase(tls: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(tls)) out[SNAKE[key] ?? key] = value;
  return out;
}

/** An Emissary Host as the gateway's. */
export function translateHost(r: EmissaryResource): Translation {
  const out: Record<string, unknown> = { apiVersion: API_VERSION, kind: 'Host', name: r.name };
  if (r.namespace !== undefined) out.namespace = r.namespace;
  if (r.labels !== undefined) out.metadata_labels = r.labels;
  const notes: FieldNote[] = [];
  for (const [field, value] of Object.entries(r.fields)) {
    if (field === 'acmeProvider') {
      if (!isPlainObject(value) || value.authority !== 'none') notes.push({ field, note: NOT_ACME });
    } else if (field === 'selector') {
      if (r.fields.mappingSelector === undefined) out.mappingSelector = value;
      notes.push({ field, note: 'read as mappingSelector, its newer name, as Emissary reads it' });
    } else if (field === 'previewUrl') {
      notes.push({ field, note: 'ignored: preview URLs are an Ambassador Edge Stack feature' });
    } else if (field === 'tls' && isPlainObject(value)) {
      out.tls = snakeCase(value);
    } else out[field] = value;
  }
  const policy = out.requestPolicy;
  const insecure = isPlainObject(policy) && isPlainObject(policy.insecure) ? policy.insecure : undefined;
  if (insecure?.action === undefined && (out.tlsSecret !== undefined || out.tlsContext !== undefined)) {
    notes.push({
      field: 'requestPolicy.insecure.action',
      note: 'not set: Redirect, as in Emissary: a request that comes over cleartext is answered 301 to https://',
    });
  }
  return { record: out, became: `Host ${r.name}`, notes, problems: [] };
}

/** An Emissary TLSContext as the gateway's. */
export function translateTlsContext(r: EmissaryResource): Translation {
  const out: Record<string, unknown> = { apiVersion: API_VERSION, kind: 'TLSContext', name: r.name };
  if (r.namespace !== undefined) out.namespace = r.namespace;
  const notes: FieldNote[] = [];
  for (const [field, value] of Object.entries(r.fields)) {
    if (field === 'redirect_cleartext_from') {
      notes.push({
        field,
        note: "a request for its hosts that comes over cleartext, on the gateway's cleartext port (PORT, --port), is answered 301 to https://",
      });
    }
    out[field] = value;
  }
  return { record: out, became: `TLSContext ${r.name}`, notes, problems: [] };
}
