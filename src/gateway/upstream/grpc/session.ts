/**
 * @module gateway/upstream/grpc/session
 * The HTTP/2 connection a gRPC route keeps to one endpoint of its cluster:
 * opened on the first call, shared by every call to that endpoint (HTTP/2
 * multiplexes them), replaced once it closes or is told to go away, and
 * closed when idle for the cluster's idle timeout. h2c for a plain
 * service, h2 over TLS (ALPN) for an `https://` one, with the TLSContext's
 * certificates and name.
 */
import { connect, type ClientHttp2Session, type SecureClientSessionOptions } from 'node:http2';
import { connectOptions } from '../../../tls';
import type { ClusterSettings } from '../endpoints/cluster';
import type { Endpoint, EndpointSession } from '../endpoints/endpoint';
import { originOf } from '../service';

/** How long an idle HTTP/2 connection to an upstream is kept when the cluster does not say: Envoy's hour. */
const DEFAULT_IDLE_MS = 3_600_000;

/** The error a connection fails with when it is not made within `connect_timeout_ms`. */
export class ConnectTimeout extends Error {
  readonly code = 'ETIMEDOUT';
}

function ignore(): void {}

/** The HTTP/2 connection to one endpoint, made again when it is gone. */
export class UpstreamSession implements EndpointSession {
  private session: ClientHttp2Session | null = null;
  private closed = false;

  constructor(
    private readonly origin: string,
    private readonly options: SecureClientSessionOptions,
    private readonly connectTimeoutMs: number,
    private readonly idleMs: number,
  ) {}

  /** The connection when it is up and takes calls; undefined while there is none, or it connects. */
  open(): ClientHttp2Session | undefined {
    const known = this.session;
    return known !== null && !known.connecting && !known.closed && !known.destroyed ? known : undefined;
  }

  /** The open connection, or a new one (still connecting: calls made on it wait for it). */
  current(): ClientHttp2Session {
    const known = this.session;
    if (known !== null && !known.closed && !known.destroyed) return known;
    if (this.closed) throw new Error('the cluster is closed');
    const session = connect(this.origin, this.options);
    this.session = session;
    // Its failures are told to the calls on it, each as its own stream's error.
    session.on('error', ignore);
    // Every call waiting for it to connect listens: as many as the calls that come meanwhile.
    session.setMaxListeners(0);
    const forget = (): void => {
      if (this.session === session) this.session = null;
    };
    session.once('close', forget);
    session.once('goaway', forget);
    const timer = setTimeout(() => {
      session.destroy(new ConnectTimeout(`not connected to ${this.origin} within ${this.connectTimeoutMs} ms`));
    }, this.connectTimeoutMs);
    session.once('connect', () => clearTimeout(timer));
    session.once('close', () => clearTimeout(timer));
    // Closed gracefully when silent: the calls under way finish first.
    session.setTimeout(this.idleMs, () => session.close());
    return session;
  }

  /** Closes the connection: gracefully (its calls finish), or at once with `force`. */
  close(force = false): void {
    this.closed = true;
    const session = this.session;
    this.session = null;
    if (session === null) return;
    if (force) session.destroy();
    else session.close();
  }
}

/** The HTTP/2 connection of `endpoint`, made for the first gRPC call to it with the cluster's settings. */
export function sessionOf(
  endpoint: Endpoint,
  settings: ClusterSettings,
  servername: string | undefined,
): UpstreamSession {
  // Only this function sets it.
  let session = endpoint.h2 as UpstreamSession | null;
  if (session === null) {
    const tls = settings.secure && settings.tls !== undefined ? connectOptions(settings.tls) : {};
    const options: SecureClientSessionOptions = settings.secure
      ? { ...tls, ALPNProtocols: ['h2'], ...(servername !== undefined ? { servername } : {}) }
      : {};
    session = new UpstreamSession(
      originOf(settings.secure, endpoint.address, endpoint.port),
      options,
      settings.connectTimeoutMs,
      settings.idleTimeoutMs ?? DEFAULT_IDLE_MS,
    );
    endpoint.h2 = session;
  }
  return session;
}
