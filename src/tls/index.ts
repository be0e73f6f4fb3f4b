/**
 * @module tls
 * TLS as an ingress serves it, below the configuration: certificates and
 * keys checked and described (never shown), the certificates of an HTTPS
 * port chosen by SNI with their contexts' settings, the client certificate
 * of a connection told to upstreams as Envoy's X-Forwarded-Client-Cert, and
 * the options of TLS to an upstream.
 */
export {
  altNames,
  certificateLine,
  describeCertificate,
  readCertificates,
  readPrivateKey,
  validityProblem,
  type CertificateInfo,
} from './certificates';
export {
  checkBundle,
  checkPair,
  isProblem,
  type CertificateBundle,
  type CertificatePair,
  type MaterialProblem,
} from './pair';
export {
  CertificateStore,
  contextOptions,
  normalName,
  servedContext,
  type ClientCertificates,
  type ServedContext,
  type ServedEntry,
  type ServingSettings,
} from './store';
export {
  agreedProtocol,
  certificateChooser,
  certificateFor,
  HTTP1_PROTOCOLS,
  misdirected,
  type CertificateChooser,
  type ServingCertificates,
} from './serving';
export {
  forwardedClientCert,
  type ClientCertDetails,
  type ClientCertPolicy,
  type ForwardClientCert,
} from './client-cert';
export { connectOptions, type UpstreamTls } from './upstream';
