/**
 * @module gateway/tls/contexts
 * TLS contexts as a configuration names them: a TLSContext found by name,
 * the certificate it serves or presents, the settings it serves with
 * (client certificates, versions, ciphers, curves, ALPN), and the TLS an
 * upstream is called with, each problem said at its record and field. A
 * Secret is looked for in the namespace of the record that names it
 * (`default` when it has none); a TLSContext's `<name>.<namespace>` names
 * another, unless its `secret_namespacing` is false (Emissary's rule).
 */
import type { SecureVersion } from 'node:tls';
import { createSecureContext } from 'node:tls';
import { connectOptions, type CertificatePair, type ServingSettings, type UpstreamTls } from '../../tls';
import type { GatewayConfig, GatewayRecord, RecordSource } from '../config/schema';
import { DEFAULT_NAMESPACE, TLS_VERSIONS, type TlsContextRecord, type TlsSettings } from '../config/tls';
import { MaterialReader, type SecretRef, type Use } from './material';

/** How TLS material is read. */
export interface TlsReadOptions {
  /** The clock a certificate's expiry is held against, in ms. Default `Date.now`. */
  readonly now?: () => number;
  /** The largest certificate or key file read, in bytes. Default 8 MiB. */
  readonly fileSizeLimit?: number;
}

/** A Secret a record names: `<name>.<namespace>` read so unless `namespacing` is false. */
export function secretRef(
  written: string,
  own: string | undefined,
  namespacing: boolean | undefined,
  field: string,
): SecretRef {
  const dot = written.lastIndexOf('.');
  if (namespacing !== false && dot > 0 && dot < written.length - 1)
    return { name: written.slice(0, dot), namespace: written.slice(dot + 1), field };
  return { name: written, namespace: own ?? DEFAULT_NAMESPACE, field };
}

/** The field of a context's settings that OpenSSL's refusal is about. */
export function settingsField(message: string): string {
  if (/cipher/i.test(message)) return 'cipher_suites';
  if (/curve|group/i.test(message)) return 'ecdh_curves';
  return 'min_tls_version';
}

/** Reads the TLS contexts of a configuration and what they name. */
export class ContextReader {
  readonly reader: MaterialReader;
  private readonly contexts = new Map<string, TlsContextRecord>();

  constructor(
    protected readonly config: GatewayConfig,
    sourceOf: (record: object) => RecordSource | undefined,
    options: TlsReadOptions,
  ) {
    this.reader = new MaterialReader(
      config.secrets ?? [],
      sourceOf,
      options.fileSizeLimit ?? 8 * 1024 * 1024,
      (options.now ?? Date.now)(),
    );
    for (const c of config.tlsContexts ?? []) this.contexts.set(c.name, c);
  }

  /** The settings a record's TLS context gives; `prefix` is where they are in it (`tls.` for a Host's inline). */
  settings(record: GatewayRecord, s: TlsSettings, namespace: string | undefined, prefix: string): ServingSettings {
    const use: Use = { record, who: `${record.kind} ${record.name}`, role: 'verifies' };
    let ca: Buffer | undefined;
    let required = s.cert_required === true;
    if (s.ca_secret !== undefined) {
      const found = this.reader.secretBundle(
        secretRef(s.ca_secret, namespace, s.secret_namespacing, `${prefix}ca_secret`),
        use,
      );
      ca = found?.bundle.ca;
      required ||= found?.certRequired === true;
    } else if (s.cacert_chain_file !== undefined) {
      ca = this.reader.fileBundle(record, s.cacert_chain_file, use)?.ca;
    }
    const version = (v: string | undefined): SecureVersion | undefined =>
      v === undefined ? undefined : TLS_VERSIONS[v];
    return {
      ...(ca !== undefined ? { ca } : {}),
      clientCertificates: ca === undefined ? 'none' : required ? 'required' : 'optional',
      minVersion: version(s.min_tls_version),
      maxVersion: version(s.max_tls_version),
      ciphers: s.cipher_suites?.join(':'),
      ecdhCurve: s.ecdh_curves?.join(':'),
      alpn: s.alpn_protocols,
    };
  }

  /** The certificate a TLSContext names, if any. */
  contextPair(c: TlsContextRecord, who: string, role: Use['role']): CertificatePair | undefined {
    const use: Use = { record: c, who, role };
    if (c.secret !== undefined)
      return this.reader.secretPair(secretRef(c.secret, c.namespace, c.secret_namespacing, 'secret'), use);
    if (c.cert_chain_file !== undefined && c.private_key_file !== undefined)
      return this.reader.filePair(c, c.cert_chain_file, c.private_key_file, use);
    return undefined;
  }

  /** The TLSContext a record names at `field`, or undefined (a problem said). */
  context(record: GatewayRecord, name: string, field: string): TlsContextRecord | undefined {
    const found = this.contexts.get(name);
    if (found === undefined) {
      const known = [...this.contexts.keys()].join(', ') || 'none';
      this.reader.problem(record, field, `names no TLSContext '${name}' (TLSContexts: ${known})`);
    }
    return found;
  }

  /** TLS to an upstream with a TLSContext. */
  upstream(c: TlsContextRecord): UpstreamTls | undefined {
    const who = `TLSContext ${c.name}`;
    const pair = this.contextPair(c, who, 'presents');
    const settings = this.settings(c, c, c.namespace, '');
    const upstream: UpstreamTls = {
      origin: who,
      ...(pair !== undefined ? { pair } : {}),
      ...(settings.ca !== undefined ? { ca: settings.ca } : {}),
      ...(c.sni !== undefined ? { servername: c.sni } : {}),
      minVersion: settings.minVersion,
      maxVersion: settings.maxVersion,
      ciphers: settings.ciphers,
      ecdhCurve: settings.ecdhCurve,
    };
    try {
      createSecureContext(connectOptions(upstream));
    } catch (err) {
      this.reader.problem(c, settingsField((err as Error).message), (err as Error).message);
      return undefined;
    }
    return upstream;
  }
}
