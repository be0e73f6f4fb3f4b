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

/** What a connection of an HTTPS port was served: its context, among the certificates served at its handshake. */
interface ConnectionServed {
  readonly serving: ServingCertificates;
  readonly served: ServedContext;
}

/**
 * Kept on the connection itself, not in a map by connection: an HTTP/2
 * request's \`socket\` is a proxy of the connection, which passes on the
 * reading of a property but is not the connection in a map.
 */
const SERVED = Symbol('gatehouse.tls.served');

type Remembering = { [SERVED]?: ConnectionServed };

function remember(socket: TLSSocket, serving: ServingCertificates, served: ServedContext): void {
  (socket as Remembering)[SERVED] = { serving, served };
}

function servedOn(socket: object): ConnectionServed | undefined {
  return (socket as Remembering)[SERVED];
}

/** The name of a host (\`name\`, \`name:port\`, \`[::1]:port\`), without its port. */
function hostName(host: string): string {
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    return close === -1 ? host : host.slice(0, close + 1);
  }
  const colon = host.indexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/**
 * Whether a request for \`host\` must be made on a connection of its own
 * (HTTP's 421 Misdirected Request): the connection was made for another
 * name (its SNI, or none) and given another TLS context than \`host\`'s,
 * and \`host\`'s asks for client certificates or for a version or cipher
 * the connection did not agree on. Without it, a client that may not pass
 * a context's handshake would name another host in its ClientHello and
 * this one in its Host. Contexts that ask for none of this may share
 * connections, as HTTP/2 clients share one among the names a certificate
 * covers. False for a connection of no HTTPS port (cleartext, \`--tls-cert\`).
 */
export function misdirected(socket: object, host: string): boolean {
  const on = servedOn(socket);
  if (on === undefined) return false;
  const forHost = certificateFor(on.serving, hostName(host));
  if (forHost === undefined || forHost === on.served) return false;
  const settings = forHost.entry.settings;
  return settings.clientCertificates !== 'none' || outsideContext(socket as TLSSocket, settings) !== undefined;
}

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

  function SNICallback(this: unknown, servername: string, done: SniDone): void {
    const serving = current;
    const served = serving && certificateFor(serving, servername);
    if (serving === undefined || served === undefined) {
      done(new Error('no certificate is served'));
      return;
    }
    const socket = sniConnection(this);
    if (socket !== undefined) {
      askAsContextSays(socket, served);
      remember(socket, serving, served);
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
      let served = servedOn(socket)?.served;
      if (served === undefined && current !== undefined) {
        served = certificateFor(current, undefined);
        if (served !== undefined) remember(socket, current, served);
      }
      if (served === undefined) return;
      if (outsideContext(socket, served.entry.settings) !== undefined) socket.destroy();
    },
  };
}
