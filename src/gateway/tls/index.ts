/**
 * @module gateway/tls
 * TLS as the gateway serves a configuration: its Host, TLSContext and
 * Secret records resolved into certificates by name, Host routing, TLS to
 * upstreams and the client-certificate policy (./resolve); the Hosts as
 * requests meet them (./hosts); the certificates in service, described
 * (./ledger).
 */
export { chooseHost, globsMayMeet, hostSelects, type HostRoute } from './hosts';
export type { CertificateInService, CertificateRole } from './ledger';
export { addressWithTls, hostTables } from './routes';
export { resolveTls, type GatewayTls, type TlsReadOptions } from './resolve';
