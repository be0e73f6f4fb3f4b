/**
 * @module tls/store
 * The certificates an HTTPS port serves, chosen by the name a client asks
 * for (SNI) as Envoy chooses among its filter chains: the certificate
 * served for that exact name, else the one of the longest wildcard that
 * covers it (`*.example.com` covers `a.example.com` and `a.b.example.com`,
 * not `example.com`), else the one served for any name (`*`). Each comes
 * with the settings of its TLS context: client certificates, protocol
 * versions, ciphers, curves and ALPN protocols.
 */
import { createSecureContext, type SecureContext, type SecureContextOptions, type SecureVersion } from 'node:tls';
import type { CertificatePair } from './pair';

/** Whether a client is asked for its certificate: not at all, and checked when it gives one, or required. */
export type ClientCertificates = 'none' | 'optional' | 'required';

/** How a certificate is served, beside the certificate itself. */
export interface ServingSettings {
  /** The authorities a client's certificate is checked against. */
  readonly ca?: Buffer;
  readonly clientCertificates: ClientCertificates;
  readonly minVersion?: SecureVersion;
  readonly maxVersion?: SecureVersion;
  /** OpenSSL's cipher list, `:` between names. */
  readonly ciphers?: string;
  /** OpenSSL's curve list, `:` between names. */
  readonly ecdhCurve?: string;
  /** The ALPN protocols offered, in order of preference; undefined for the server's own. */
  readonly alpn?: readonly string[];
}

/** One certificate and the names it is served for. */
export interface ServedEntry {
  /** Who asks for it, for messages: `Host shop`, `TLSContext shop-context`. */
  readonly origin: string;
  /** Exact names (lower case), wildcards (`*.example.com`), or `*` for any name. */
  readonly names: readonly string[];
  readonly pair: CertificatePair;
  readonly settings: ServingSettings;
}

/** A certificate ready to be served: its entry and its OpenSSL context. */
export interface ServedContext {
  readonly entry: ServedEntry;
  readonly options: SecureContextOptions;
  readonly context: SecureContext;
}

/** The options of a certificate's context. */
export function contextOptions(pair: CertificatePair, settings: ServingSettings): SecureContextOptions {
  return {
    cert: pair.cert,
    key: pair.key,
    ...(settings.ca !== undefined ? { ca: settings.ca } : {}),
    ...(settings.minVersion !== undefined ? { minVersion: settings.minVersion } : {}),
    ...(settings.maxVersion !== undefined ? { maxVersion: settings.maxVersion } : {}),
    ...(settings.ciphers !== undefined ? { ciphers: settings.ciphers } : {}),
    ...(settings.ecdhCurve !== undefined ? { ecdhCurve: settings.ecdhCurve } : {}),
  };
}

/** Makes a certificate's context. Throws OpenSSL's refusal (a cipher or curve it does not know, versions out of order). */
export function servedContext(entry: ServedEntry): ServedContext {
  const options = contextOptions(entry.pair, entry.settings);
  return { entry, options, context: createSecureContext(options) };
}

/** A name as it is compared: lower case, without a trailing dot. */
export function normalName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** The certificates of one configuration, by name. */
export class CertificateStore {
  private readonly exact = new Map<string, ServedContext>();
  /** `.example.com` of `*.example.com`, the longest first. */
  private readonly wildcards: { suffix: string; served: ServedContext }[] = [];
  /** What is served for any name (`*`), if anything is. */
  readonly catchAll: ServedContext | undefined;
  /** The first certificate given: served when nothing else is. */
  readonly first: ServedContext | undefined;
  readonly contexts: readonly ServedContext[];

  /** `contexts` in the order given: of two that name the same name, the first wins. */
  constructor(contexts: readonly ServedContext[]) {
    this.contexts = contexts;
    this.first = contexts[0];
    let catchAll: ServedContext | undefined;
    for (const served of contexts) {
      for (const name of served.entry.names) {
        if (name === '*') catchAll ??= served;
        else if (name.startsWith('*.')) {
          const suffix = name.slice(1);
          if (!this.wildcards.some((w) => w.suffix === suffix)) this.wildcards.push({ suffix, served });
        } else if (!this.exact.has(name)) this.exact.set(name, served);
      }
    }
    this.wildcards.sort((a, b) => b.suffix.length - a.suffix.length);
    this.catchAll = catchAll;
  }

  /** How many certificates it serves. */
  get size(): number {
    return this.contexts.length;
  }

  /**
   * The certificate for a name a client asked for: exact, then the longest
   * wildcard, then any name's; undefined when none covers it (and for no name).
   */
  choose(servername: string | undefined): ServedContext | undefined {
    if (servername === undefined || servername === '') return this.catchAll;
    const name = normalName(servername);
    const exact = this.exact.get(name);
    if (exact !== undefined) return exact;
    for (const { suffix, served } of this.wildcards) {
      if (name.length > suffix.length && name.endsWith(suffix)) return served;
    }
    return this.catchAll;
  }
}
