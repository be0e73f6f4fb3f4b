/**
 * @module gatehouse/serving/http-server
 * The listening side of the gateway: one port, HTTP or HTTPS, on which
 * each connection is served as HTTP/1.1 or HTTP/2 (./http1, ./http2): over
 * TLS as ALPN chose, in cleartext by what the connection sends first
 * (./first-bytes). A drain keeps serving while every answer closes its
 * connection (a GOAWAY over HTTP/2); a close stops accepting, answers what
 * was already sent, lets in-flight requests finish (bounded), then drops
 * the rest (./closing).
 */
import { once } from 'node:events';
import type http from 'node:http';
import type https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createSecureContext } from 'node:tls';
import { listenOptions, type BoundPort } from '../../ports';
import { closeServer } from './closing';
import { routeByFirstBytes, type Undecided } from './first-bytes';
import { createHttp1Serving } from './http1';
import { createHttp2Serving, type Http2Limits, type Http2Serving } from './http2';
import { listenFailure } from './listen-failure';
import { checkingRequests, type RejectedListener } from './refusals';
import { createContextStore, DEFAULT_ALPN, type ContextStore } from './tls-contexts';
import { certificateValidity, readTlsFiles, type CertificateValidity, type TlsFiles } from './tls-files';

export interface ListenOptions {
  host: string;
  port: number;
  tls?: TlsFiles;
  /** HTTPS with these options (a certificate chooser's: SNICallback, the default context) instead of `tls`'s files. */
  secure?: https.ServerOptions;
  /** The largest TLS file read, in bytes. Default 8 MiB. */
  fileSizeLimit?: number;
  /**
   * Told of every request the server answers without the handler (400, 408,
   * 431, 501), for the access log, with the registry's code of its error.
   */
  onRejected?: RejectedListener;
  /** HTTPS: how long a connection may take to finish its TLS handshake, in ms. Default Node's, 120 s. */
  handshakeTimeoutMs?: number;
  /** How long an idle keep-alive connection is kept, in ms. Default {@link KEEP_ALIVE_TIMEOUT_MS}. */
  keepAliveTimeoutMs?: number;
  /**
   * How long a request's head may take to come whole before a 408, in ms;
   * the same bounds a connection's first bytes (the HTTP/2 preface) and its
   * SETTINGS. Default {@link HEADERS_TIMEOUT_MS}, or the request timeout if shorter.
   */
  headersTimeoutMs?: number;
  /**
   * How long a whole request, body included, may take to come before a 408,
   * in ms (over HTTP/2 too). Default {@link REQUEST_TIMEOUT_MS}.
   */
  requestTimeoutMs?: number;
  /** A port bound beforehand (see `bindPort`), served on its first address instead of binding `host:port`. */
  bound?: BoundPort;
  /** Listen beside other sockets on the same port (`SO_REUSEPORT`): each worker of a gateway does. */
  reusePort?: boolean;
  /** Serve HTTP/2 beside HTTP/1.1 (h2c with prior knowledge; `h2` by ALPN over TLS). Default true. */
  http2?: boolean;
  /** The bounds of each HTTP/2 connection. */
  http2Limits?: Http2Limits;
}

/** How long a request's headers may take to come whole by default: Node's own, 60 s. */
export const HEADERS_TIMEOUT_MS = 60_000;

/** How long a whole request may take to come by default: Node's own, 5 minutes. */
export const REQUEST_TIMEOUT_MS = 300_000;

/**
 * How often the connections are checked against those two timeouts, in ms:
 * a tenth of the shorter, at most a second. Node checks every 30 s by
 * default, which let headers sent one at a time hold a connection up to
 * 90 s where 60 s is promised.
 */
export function timeoutCheckInterval(headersTimeoutMs: number, requestTimeoutMs: number): number {
  return Math.max(10, Math.min(1000, Math.floor(Math.min(headersTimeoutMs, requestTimeoutMs) / 10)));
}

/**
 * How long an idle keep-alive connection is kept by default: longer than
 * the load balancers and proxies in front keep theirs (AWS ALB and nginx 60
 * s), as they expect of what they forward to. With Node's 5 s, one of them
 * sends a request on a connection the gateway is closing, and answers its
 * client 502 (Envoy: 503 "upstream connect error"). Envoy's own default is 1 h.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * How long a stopping gateway keeps serving by default before it closes its
 * ports, in ms: Kubernetes takes a few seconds to take a terminating pod out
 * of its Services' endpoints (kube-proxy, an ingress controller, a cloud
 * load balancer each hear of it in turn), and sends it requests meanwhile.
 */
export const DRAIN_DELAY_MS = 5_000;

/** A server that is listening. */
export interface RunningServer {
  /** The HTTP/1.1 server, which holds the listening socket. */
  readonly server: http.Server | https.Server;
  /** The HTTP/2 side, unless HTTP/2 is off. */
  readonly http2?: Http2Serving;
  readonly port: number;
  readonly protocol: 'http' | 'https';
  /** HTTPS only: the validity of the certificate served to new connections. */
  readonly certificate?: CertificateValidity;
  /**
   * HTTPS only: the contexts served by the name a client asks for; the
   * default is the TLS files'. Contexts added are served to new connections.
   */
  readonly tlsContexts?: ContextStore;
  /**
   * HTTPS only: reads the TLS files again and serves them to new connections
   * (those open keep theirs). Throws, naming the file at fault, and keeps the
   * certificate in service when the files cannot be used.
   */
  reloadTls(): CertificateValidity;
  /**
   * Whether requests that ask to switch protocols (WebSocket) are handed to
   * the app with their connection, for a route that tunnels them. Off (the
   * default), they are served as plain HTTP by Node's own handling.
   */
  acceptUpgrades(on: boolean): void;
  /**
   * Keeps serving, but every answer not yet begun says `Connection: close`
   * (HTTP/2: every connection gets a GOAWAY), so that each client takes its
   * next request elsewhere; upgrades are refused. `close()` drains too.
   */
  drain(): void;
  /**
   * Stops accepting, answers the requests already sent on open connections,
   * waits up to `graceMs` for in-flight requests, then closes what is left.
   */
  close(graceMs?: number): Promise<void>;
}

/** Starts listening with `handler`; HTTPS when TLS files are given. */
export async function listen(handler: http.RequestListener, options: ListenOptions): Promise<RunningServer> {
  const { onRejected } = options;
  const checked = checkingRequests(handler, onRejected);
  const tlsFiles = options.tls ? readTlsFiles(options.tls, options.fileSizeLimit) : undefined;
  const withHttp2 = options.http2 ?? true;
  const alpn = withHttp2 ? DEFAULT_ALPN : ['http/1.1'];
  const tlsContexts = tlsFiles && createContextStore({ context: createSecureContext(tlsFiles), alpn });
  let certificate = tlsFiles && certificateValidity(tlsFiles.cert);
  const overTls = tlsFiles !== undefined || options.secure !== undefined;
  /** Connections taken: over TLS, once their handshake is done. */
  const open = new Set<Socket>();
  function forget(this: Socket): void {
    open.delete(this);
  }
  const requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  // As Node does: a head cannot be given longer than its whole request.
  const headersTimeoutMs = options.headersTimeoutMs ?? Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs);
  const http1 = createHttp1Serving({
    checked,
    tls: tlsFiles && tlsContexts && { ...tlsFiles, contexts: tlsContexts },
    secure: options.secure,
    handshakeTimeoutMs: options.handshakeTimeoutMs,
    keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? KEEP_ALIVE_TIMEOUT_MS,
    headersTimeoutMs,
    requestTimeoutMs,
    timeoutCheckIntervalMs: timeoutCheckInterval(headersTimeoutMs, requestTimeoutMs),
    onRejected,
    taken: (socket) => open.has(socket),
  });
  const server = http1.server;
  const http2 = withHttp2
    ? createHttp2Serving({
        handler: checked,
        limits: options.http2Limits,
        handshakeTimeoutMs: server.headersTimeout,
        idleTimeoutMs: server.keepAliveTimeout,
        requestTimeoutMs: server.requestTimeout,
        onRejected,
      })
    : undefined;
  const undecided: Undecided = new Set();
  const toHttp1 = (socket: Socket) => {
    http1.serveConnection(socket);
    socket.resume();
  };
  const toHttp2 = (socket: Socket) => http2!.accept(socket);
  server.on(http1.connectionEvent, (socket: Socket) => {
    open.add(socket);
    socket.on('close', forget);
    if (http2 === undefined) http1.serveConnection(socket);
    else if (overTls) {
      if ((socket as Socket & { alpnProtocol?: string | false }).alpnProtocol === 'h2') toHttp2(socket);
      else http1.serveConnection(socket);
    } else {
      // A prefix of the preface that never becomes it is bounded as a request's head is.
      routeByFirstBytes(socket, { h2: toHttp2, http1: toHttp1 }, server.headersTimeout, undecided);
    }
  });
  // Over TLS, a connection is known to the listener (and to Node's
  // closeIdleConnections) only once its handshake is done: one that never
  // finishes it (a port check, a stalled client) would hold close() open.
  const tcp = new Set<Socket>();
  function forgetTcp(this: Socket): void {
    tcp.delete(this);
  }
  if (overTls) {
    server.on('connection', (socket: Socket) => {
      tcp.add(socket);
      socket.on('close', forgetTcp);
    });
  }
  try {
    if (options.bound) {
      await options.bound.listeners[0].handTo(server);
    } else {
      server.listen(listenOptions({ host: options.host, port: options.port, reusePort: options.reusePort }));
      // once() rejects with the server's 'error' while it waits for 'listening'.
      await once(server, 'listening');
    }
  } catch (err) {
    throw listenFailure(err, overTls ? 'HTTPS' : 'HTTP', options.host, options.port);
  }
  const port = (server.address() as AddressInfo).port;

  /** From now on, answers close their connections (as Envoy's drain and Go's Shutdown do). */
  function drain(): void {
    http1.drain(open);
    http2?.drain();
  }

  let closing: Promise<void> | undefined;
  return {
    server,
    http2,
    port,
    protocol: overTls ? 'https' : 'http',
    get certificate() {
      return certificate;
    },
    tlsContexts,
    reloadTls() {
      if (!options.tls || !tlsContexts) throw new Error('the server does not serve HTTPS');
      const files = readTlsFiles(options.tls, options.fileSizeLimit);
      const validity = certificateValidity(files.cert);
      // Those that name no host get the server's own; those that name one, the store's pick.
      (server as https.Server).setSecureContext(files);
      tlsContexts.setDefault({ context: createSecureContext(files), alpn });
      certificate = validity;
      return validity;
    },
    acceptUpgrades(on) {
      http1.acceptUpgrades(on);
    },
    drain,
    close(graceMs = 10_000) {
      drain();
      closing ??= closeServer({ server, open, tcp, undecided, http2 }, graceMs);
      return closing;
    },
  };
}
