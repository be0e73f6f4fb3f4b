/**
 * @module tls/serving
 * The certificate chooser of an HTTPS port: the server options that pick,
 * for each new connection, the certificate of the name it asks for (SNI),
 * ask its client for a certificate as that certificate's TLS context says,
 * and agree on an ALPN protocol among those the context offers; and the
 * switch to another configuration's certificates, which new connections
 * get while open ones keep theirs.
 *
 * A connection that names no server (no SNI), or a name no certificate
 * covers, gets the certificate served for any name (a Host without a
 * hostname, or `*`), else the fallback (`--tls-cert`'s), else the first of
 * the configuration. A name longer than 255 bytes never gets here: OpenSSL
 * refuses the ClientHello with an `unrecognized_name` alert. Versions,
 * ciphers and curves are the port's (./port-wide).
 */
import type { Server, SecureContext, TLSSocket, TlsOptions } from 'node:tls';
import { askClientCertificate, askEveryClient, sniConnection } from '../platform';
import { outsideContext, portWide } from './port-wide';
import type { CertificateStore, ServedContext } from './store';

/** The protocols an HTTP/1.1 server speaks, as ALPN names them. */
export const HTTP1_PROTOCOLS: readonly string[] = ['http/1.1'];

/** What an HTTPS port serves: a configuration's certificates, and the one served when none of them is chosen. */
export interface ServingCertificates {
  readonly store: CertificateStore;
  /** Served for a name no certificate covers, and without a name, unless one is served for any name. */
  readonly fallback?: ServedContext;
}

/** The certificate a connection asking for `servername` (undefined: none asked for) gets. */
export function certificateFor(
  serving: ServingCertificates,
  servername: string | undefined,
): ServedContext | undefined {
  return serving.store.choose(servername) ?? serving.fallback ?? serving.store.first;
}

/** The ALPN protocol agreed: the first of `wanted` that the client offers and the server speaks. */
export function agreedProtocol(
  wanted: readonly string[],
  offered: readonly string[],
  speaks: readonly string[],
): string | undefined {
  for (const protocol of wanted) if (offered.includes(protocol) && speaks.includes(protocol)) return protocol;
  return undefined;
}

/** The options an HTTPS server is made with, and the switch of what it serves. */
export interface CertificateChooser {
  /** The options to make the server with, serving `serving`: the chooser's callbacks and the default context's. */
  serverOptions(serving: ServingCertificates): TlsOptions;
  /** Serves `serving` to the new connections of `server` (one made with {@link serverOptions}). */
  use(server: Server, serving: ServingCertificates): void;
  /**
   * To be called with each connection once its handshake is done: closes it
   * when the version or cipher it agreed on is one its context does not list.
   */
  readonly enforce: (socket: TLSSocket) => void;
  /** What is served now. */
  readonly serving: ServingCertificates | undefined;
}

type SniDone = (err: Error | null, context?: SecureContext) => void;

/** Asks the connection's client for a certificate as `served`'s context says. */
function askAsContextSays(socket: Parameters<typeof askClientCertificate>[0], served: ServedContext): void {
  const asks = served.entry.settings.clientCertificates;
  askClientCertificate(socket, asks !== 'none', asks === 'required');
}

/**
 * A certificate chooser for a server that speaks `speaks` (ALPN names, in
 * the server's order of preference).
 */
export function certificateChooser(speaks: readonly string[] = HTTP1_PROTOCOLS): CertificateChooser {
  let current: ServingCertificates | undefined;
  /** The context each connection that named a server was given. */
  const chosen = new WeakMap<TLSSocket, ServedContext>();

  function SNICallback(this: unknown, servername: string, done: SniDone): void {
    const served = current && certificateFor(current, servername);
    if (served === undefined) {
      done(new Error('no certificate is served'));
      return;
    }
    const socket = sniConnection(this);
    if (socket !== undefined) {
      askAsContextSays(socket, served);
      chosen.set(socket, served);
    }
    done(null, served.context);
  }

  /** The default context's options with the port's versions, ciphers and curves. */
  function defaultOptions(serving: ServingCertificates, byDefault: ServedContext | undefined): TlsOptions {
    const all = serving.fallback ? [...serving.store.contexts, serving.fallback] : serving.store.contexts;
    // The port's take the place of the context's own: a context lists ciphers or curves only when the port does.
    return { ...byDefault?.options, ...portWide(all) };
  }

  function ALPNCallback({ servername, protocols }: { servername: string; protocols: string[] }): string | undefined {
    const served = current && certificateFor(current, servername || undefined);
    return agreedProtocol(served?.entry.settings.alpn ?? speaks, protocols, speaks);
  }

  return {
    serverOptions(serving) {
      current = serving;
      const byDefault = certificateFor(serving, undefined);
      const asks = byDefault?.entry.settings.clientCertificates ?? 'none';
      return {
        ...defaultOptions(serving, byDefault),
        requestCert: asks !== 'none',
        rejectUnauthorized: asks === 'required',
        SNICallback,
        ALPNCallback,
      };
    },
    use(server, serving) {
      current = serving;
      // A connection without SNI is never asked about: it gets the server's own context and asks.
      const byDefault = certificateFor(serving, undefined);
      if (byDefault === undefined) return;
      server.setSecureContext(defaultOptions(serving, byDefault));
      const asks = byDefault.entry.settings.clientCertificates;
      askEveryClient(server, asks !== 'none', asks === 'required');
    },
    get serving() {
      return current;
    },
    enforce(socket) {
      const served = chosen.get(socket) ?? (current && certificateFor(current, undefined));
      if (served === undefined) return;
      if (outsideContext(socket, served.entry.settings) !== undefined) socket.destroy();
    },
  };
}
