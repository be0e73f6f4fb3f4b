/**
 * @module tls/upstream
 * TLS to an upstream as a TLSContext asks for it: the client certificate
 * presented, the authorities the upstream's certificate is checked against
 * (the system's when the context names none), the name sent as SNI and
 * checked in that certificate, and the protocol versions, ciphers and
 * curves offered. The upstream's certificate is always checked: a context
 * without `ca_secret` checks it against the system's authorities.
 */
import type { ConnectionOptions, SecureVersion } from 'node:tls';
import type { CertificatePair } from './pair';

/** How an upstream is called over TLS. */
export interface UpstreamTls {
  /** What asks for it, for messages: `TLSContext upstream-mtls`. */
  readonly origin: string;
  /** The certificate and key presented to the upstream, when it asks for one. */
  readonly pair?: CertificatePair;
  /** The authorities the upstream's certificate is checked against; the system's when absent. */
  readonly ca?: Buffer;
  /** The name sent as SNI and checked in the upstream's certificate; the service's own host name when absent. */
  readonly servername?: string;
  readonly minVersion?: SecureVersion;
  readonly maxVersion?: SecureVersion;
  readonly ciphers?: string;
  readonly ecdhCurve?: string;
}

/** The options of a TLS connection to the upstream (undici's connector takes them as they are). */
export function connectOptions(upstream: UpstreamTls): ConnectionOptions {
  return {
    ...(upstream.pair !== undefined ? { cert: upstream.pair.cert, key: upstream.pair.key } : {}),
    ...(upstream.ca !== undefined ? { ca: upstream.ca } : {}),
    ...(upstream.minVersion !== undefined ? { minVersion: upstream.minVersion } : {}),
    ...(upstream.maxVersion !== undefined ? { maxVersion: upstream.maxVersion } : {}),
    ...(upstream.ciphers !== undefined ? { ciphers: upstream.ciphers } : {}),
    ...(upstream.ecdhCurve !== undefined ? { ecdhCurve: upstream.ecdhCurve } : {}),
    rejectUnauthorized: true,
  };
}
