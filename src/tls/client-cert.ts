/**
 * @module tls/client-cert
 * The client certificate of a mutual TLS connection as Envoy tells an
 * upstream of it: the `X-Forwarded-Client-Cert` header (XFCC), one element
 * per proxy, `;` between its `Key=value` pairs, `,` between elements:
 * `By` (the URI of the gateway's own certificate), `Hash` (SHA-256 of the
 * client's certificate), and those `set_current_client_cert_details` asks
 * for: `Cert` and `Chain` (URL-encoded PEM), `Subject` (quoted), `URI` and
 * `DNS` (one pair each). What the module `forward_client_cert_details`
 * does with a client's own header is decided by {@link forwardedClientCert}.
 */
import { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { altUris } from './certificates';

/** Envoy's `forward_client_cert_details` modes the gateway serves. */
export type ForwardClientCert = 'SANITIZE' | 'FORWARD_ONLY' | 'APPEND_FORWARD' | 'SANITIZE_SET';

/** Envoy's `set_current_client_cert_details`: what the gateway's element holds besides `By` and `Hash`. */
export interface ClientCertDetails {
  readonly subject?: boolean;
  readonly cert?: boolean;
  readonly chain?: boolean;
  readonly dns?: boolean;
  readonly uri?: boolean;
}

/** The gateway's policy for X-Forwarded-Client-Cert. */
export interface ClientCertPolicy {
  readonly forward: ForwardClientCert;
  readonly details: ClientCertDetails;
}

/** What the gateway knows of a connection's verified client certificate. */
interface Verified {
  readonly cert: X509Certificate;
  readonly chain: readonly X509Certificate[];
  readonly by: readonly string[];
}

/** Per connection: its verified client certificate, read once; null for none. */
const verified = new WeakMap<TLSSocket, Verified | null>();

/** A value as Envoy quotes one: in `"`, with `"` and `\` escaped. */
function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, '\\$&')}"`;
}

/** A subject in RFC 2253's order (the most specific first), as Envoy writes it: `CN=client,O=Example`. */
function rfc2253(subject: string): string {
  return subject
    .split('\n')
    .filter(Boolean)
    .reverse()
    .map((part) => part.replace(/([,+"\\<>;])/g, '\\$1'))
    .join(',');
}

function pem(cert: X509Certificate): string {
  return encodeURIComponent(cert.toString());
}

/** The client certificate the connection presented and its authorities verified; null for none. */
function verifiedCertificate(socket: TLSSocket): Verified | null {
  let known = verified.get(socket);
  if (known !== undefined) return known;
  known = null;
  if (socket.authorized) {
    const peer = socket.getPeerX509Certificate();
    if (peer !== undefined) {
      const chain: X509Certificate[] = [];
      for (let issuer = peer.issuerCertificate; issuer !== undefined; issuer = issuer.issuerCertificate) {
        if (chain.includes(issuer) || issuer.fingerprint256 === peer.fingerprint256) break;
        chain.push(issuer);
      }
      const own = socket.getX509Certificate();
      known = { cert: peer, chain, by: own === undefined ? [] : altUris(own) };
    }
  }
  verified.set(socket, known);
  return known;
}

/** The gateway's XFCC element for a verified client certificate. */
function element(v: Verified, details: ClientCertDetails): string {
  const parts: string[] = [];
  for (const uri of v.by) parts.push(`By=${uri}`);
  parts.push(`Hash=${v.cert.fingerprint256.replace(/:/g, '').toLowerCase()}`);
  if (details.cert) parts.push(`Cert=${quoted(pem(v.cert))}`);
  if (details.chain) parts.push(`Chain=${quoted([v.cert, ...v.chain].map(pem).join(''))}`);
  if (details.subject) parts.push(`Subject=${quoted(rfc2253(v.cert.subject))}`);
  if (details.uri) for (const uri of altUris(v.cert)) parts.push(`URI=${uri}`);
  if (details.dns) {
    for (const entry of (v.cert.subjectAltName ?? '').split(', '))
      if (entry.startsWith('DNS:')) parts.push(`DNS=${entry.slice(4)}`);
  }
  return parts.join(';');
}

/**
 * The X-Forwarded-Client-Cert the upstream is sent, as Envoy's modes say,
 * or undefined for none. `socket` is the client's connection (a TLS one
 * when it is encrypted); `claimed` the client's own header, which passes
 * on (`FORWARD_ONLY`) or is added to (`APPEND_FORWARD`) only over a
 * connection whose client certificate was verified: a client without one
 * cannot claim one, whatever the mode.
 */
export function forwardedClientCert(
  policy: ClientCertPolicy,
  socket: TLSSocket | undefined,
  claimed: string | undefined,
): string | undefined {
  if (policy.forward === 'SANITIZE' || socket === undefined || socket.encrypted !== true) return undefined;
  const v = verifiedCertificate(socket);
  if (v === null) return undefined;
  switch (policy.forward) {
    case 'FORWARD_ONLY':
      return claimed;
    case 'APPEND_FORWARD':
      return claimed === undefined || claimed === ''
        ? element(v, policy.details)
        : `${claimed},${element(v, policy.details)}`;
    default:
      return element(v, policy.details);
  }
}
