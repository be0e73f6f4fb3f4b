/**
 * @module platform/node-tls
 * What Gatehouse reads or sets of Node's TLS server beyond its documented
 * API, in one place: which connection an SNICallback is choosing for (it
 * is called as a method of the connection), how that connection is asked
 * for a client certificate once its certificate is chosen (Node sets the
 * verify mode from the server's options alone, before the name is known),
 * and the server's own `requestCert` and `rejectUnauthorized`, which it
 * reads at each connection. Written against Node 20.20 (package.json's
 * engines); test/platform/node-tls.test.ts fails, naming the Node
 * version, when a release changes any of it.
 */
import type { Server, TLSSocket } from 'node:tls';

/** The Node release line these functions were written against. */
export const NODE_TLS_WRITTEN_FOR = 'v20.20';

interface VerifyingSocket {
  _requestCert: boolean;
  _rejectUnauthorized: boolean;
  _handle: { setVerifyMode(request: boolean, reject: boolean): void } | null;
}

/**
 * The connection an SNICallback was called for: Node calls it as a method
 * of the server's TLSSocket (`owner._SNICallback(...)`). Undefined when it
 * is not one.
 */
export function sniConnection(self: unknown): TLSSocket | undefined {
  const socket = self as Partial<VerifyingSocket> | undefined;
  return socket !== undefined && socket !== null && typeof socket === 'object' && '_handle' in socket
    ? (self as TLSSocket)
    : undefined;
}

/**
 * Asks the client of a server connection for its certificate (`request`),
 * and ends the handshake without one, or with one its authorities do not
 * vouch for (`reject`), as `requestCert` and `rejectUnauthorized` would for
 * the whole server. Called while the connection's certificate is chosen
 * (SNICallback), before the server's answer to the ClientHello is written.
 */
export function askClientCertificate(socket: TLSSocket, request: boolean, reject: boolean): void {
  const own = socket as unknown as VerifyingSocket;
  own._requestCert = request;
  own._rejectUnauthorized = reject;
  own._handle?.setVerifyMode(request, reject);
}

/**
 * Whether a server asks each new connection for a client certificate, as
 * its options `requestCert` and `rejectUnauthorized` said at creation: a
 * connection that names no server (no SNI) keeps what this sets.
 */
export function askEveryClient(server: Server, request: boolean, reject: boolean): void {
  const own = server as unknown as { requestCert: boolean; rejectUnauthorized: boolean };
  own.requestCert = request;
  own.rejectUnauthorized = reject;
}
