/**
 * @module gatehouse/serving/http-server
 * The listening side of the gateway: HTTP or HTTPS, a drain that keeps
 * serving while every answer closes its connection, and a close that stops
 * accepting, answers what was already sent, lets in-flight requests finish
 * (bounded), then drops the rest.
 */
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { BoundPort } from '../../ports';
import { ListedHeadersResponse, markCutShort } from '../../http';
import { closeLeavingIdleConnections } from '../../platform';
import { listenFailure } from './listen-failure';
import { oneAtATime } from './pipelining';
import {
  answerClientError,
  answerConnect,
  checkingRequests,
  refuseExpectation,
  refuseOnConnection,
  type RejectedListener,
} from './refusals';
import { certificateValidity, readTlsFiles, type CertificateValidity, type TlsFiles } from './tls-files';
import { upgradeListener } from './upgrades';

export interface ListenOptions {
  host: string;
  port: number;
  tls?: TlsFiles;
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
  /** A port bound beforehand (see `bindPort`), served on its first address instead of binding `host:port`. */
  bound?: BoundPort;
  /** How long a request's headers may take to come whole before a 408, in ms. Default {@link HEADERS_TIMEOUT_MS}. */
  headersTimeoutMs?: number;
  /** How long a whole request, body included, may take to come before a 408, in ms. Default {@link REQUEST_TIMEOUT_MS}. */
  requestTimeoutMs?: number;
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
  readonly server: http.Server | https.Server;
  readonly port: number;
  readonly protocol: 'http' | 'https';
  /** HTTPS only: the validity of the certificate served to new connections. */
  readonly certificate?: CertificateValidity;
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
   * Keeps serving, but every answer not yet begun says `Connection: close`,
   * so that each client takes its next request elsewhere; upgrades are
   * refused. `close()` drains too.
   */
  drain(): void;
  /**
   * Stops accepting, answers the requests already sent on open connections,
   * waits up to `graceMs` for in-flight requests, then closes what is left.
   */
  close(graceMs?: number): Promise<void>;
}

/** Where a connection keeps the answer to the last request read on it. */
const LATEST = Symbol('latest response');
type Tracked = Socket & { [LATEST]?: http.ServerResponse };

/**
 * A connection forgets its last answer once that answer is sent and its
 * request read whole: it is then no answer in flight for any use of
 * {@link LATEST}. Kept until the connection's next request, it held that
 * request's objects alive, and every young-generation collection copied
 * them once per open connection (see also ./pipelining).
 */
function forgetSent(this: http.ServerResponse): void {
  const socket = this.req.socket as Tracked;
  if (socket[LATEST] === this && this.req.complete) socket[LATEST] = undefined;
}

/** How often a closing server looks for connections with nothing in flight, to close them. */
const SWEEP_MS = 100;

/**
 * Stops listening, leaving the open connections be. Node's HTTP server
 * closes its idle keep-alive connections as it stops listening (Node 19
 * and later): a request the client has just sent on one, not read yet, was
 * lost with it (the client's ECONNRESET), as was one on a connection just
 * accepted. They are closed once what was sent has been read (see close()).
 */
function stopListening(server: http.Server, done: () => void): void {
  closeLeavingIdleConnections(server, done);
}

/**
 * Runs `fn` once the event loop has polled its connections again: whatever
 * a client sent before now has been read by then, and a request begun on a
 * connection makes it busy.
 */
function afterNextPoll(fn: () => void): void {
  // One turn may still be in the poll phase that read before the bytes came; the second is past the next.
  setImmediate(() => setImmediate(fn));
}

/** Starts listening with `handler`; HTTPS when TLS files are given. */
export async function listen(handler: http.RequestListener, options: ListenOptions): Promise<RunningServer> {
  const { onRejected } = options;
  const checked = oneAtATime(checkingRequests(handler, onRejected));
  // Once closing, every answer not yet begun says Connection: close (as Envoy's
  // drain and Go's Shutdown do): an answer that said keep-alive invites the
  // client's next request onto a connection that is about to be cut, and that
  // request is lost (a 503 from a proxy in front, a POST that cannot be retried).
  let draining = false;
  const open = new Set<Socket>();
  function forget(this: Socket): void {
    open.delete(this);
  }
  const serve: http.RequestListener = (req, res) => {
    // The last request read on a connection: pipelined ones are answered in
    // order, so this is the answer that ends it when closing.
    (req.socket as Tracked)[LATEST] = res;
    // A function of this module, not a closure: nothing is made for it per request.
    res.on('finish', forgetSent);
    if (draining) res.shouldKeepAlive = false;
    checked(req, res);
  };
  const tlsFiles = options.tls ? readTlsFiles(options.tls, options.fileSizeLimit) : undefined;
  let certificate = tlsFiles && certificateValidity(tlsFiles.cert);
  const headersTimeout = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const timeouts: http.ServerOptions = {
    headersTimeout,
    requestTimeout,
    connectionsCheckingInterval: timeoutCheckInterval(headersTimeout, requestTimeout),
  };
  const server = tlsFiles
    ? https.createServer(
        {
          ...tlsFiles,
          ...timeouts,
          requireHostHeader: false,
          handshakeTimeout: options.handshakeTimeoutMs,
          ServerResponse: ListedHeadersResponse,
        },
        serve,
      )
    : http.createServer({ ...timeouts, requireHostHeader: false, ServerResponse: ListedHeadersResponse }, serve);
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? KEEP_ALIVE_TIMEOUT_MS;
  // Every field reaches the gateway's own bound (headerCountRefusal), which answers with its detail on
  // every Node: past a count, Node 20 drops fields and Node 22 and 24 refuse the request in the parser,
  // without it. Node's header size limit still bounds how many fields a request can carry.
  server.maxHeadersCount = 0;
  const connectionEvent = options.tls ? 'secureConnection' : 'connection';
  server.on(connectionEvent, (socket: Socket) => {
    // A connection is handed over again after an upgrade the app did not take (see ./upgrades).
    if (open.has(socket)) return;
    open.add(socket);
    socket.on('close', forget);
  });
  const onUpgrade = upgradeListener({
    server,
    serve,
    connectionEvent,
    draining: () => draining,
    answering(socket) {
      const last = (socket as Tracked)[LATEST];
      return last !== undefined && !last.writableFinished && !last.destroyed ? last : undefined;
    },
    refuse: (req, socket, refusal) => refuseOnConnection(req, socket, refusal, onRejected),
  });
  // Over TLS, a connection is known to Node's HTTP server (and to its
  // closeIdleConnections) only once its handshake is done: one that never
  // finishes it (a port check, a stalled client) would hold close() open.
  const tcp = new Set<Socket>();
  function forgetTcp(this: Socket): void {
    tcp.delete(this);
  }
  if (tlsFiles) {
    server.on('connection', (socket: Socket) => {
      tcp.add(socket);
      socket.on('close', forgetTcp);
    });
  }
  /** What each connection still in its TLS handshake had read at the last sweep. */
  const handshakeProgress = new WeakMap<Socket, number>();
  /**
   * Closes the connections whose TLS handshake is not done and has not moved
   * since the last sweep: no request can be in flight on them. One under way
   * is let finish, and its request answered.
   */
  function closeStalledHandshakes(): void {
    if (tcp.size === 0) return;
    // A TLS connection is its TCP connection: the same peer address and port.
    const secured = new Set<string>();
    for (const socket of open) secured.add(`${socket.remoteAddress}|${socket.remotePort}`);
    for (const socket of tcp) {
      if (secured.has(`${socket.remoteAddress}|${socket.remotePort}`)) continue;
      if (handshakeProgress.get(socket) === socket.bytesRead) socket.destroy();
      else handshakeProgress.set(socket, socket.bytesRead);
    }
  }
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // A TLS connection that failed before its handshake was done (it timed
    // out, the client spoke plain HTTP or an old TLS) has no HTTP to answer
    // in, nor a request to log: an answer written into it would wait for a
    // handshake that never comes, and keep the connection open.
    if (tlsFiles && !open.has(socket)) socket.destroy();
    else answerClientError(err, socket, onRejected, (socket as Tracked)[LATEST]);
  });
  server.on('connect', (req: http.IncomingMessage, socket: Duplex) => answerConnect(req, socket, onRejected));
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) =>
    refuseExpectation(req, res, onRejected),
  );
  try {
    if (options.bound) {
      await options.bound.listeners[0].handTo(server);
    } else {
      server.listen(options.port, options.host);
      // once() rejects with the server's 'error' while it waits for 'listening'.
      await once(server, 'listening');
    }
  } catch (err) {
    throw listenFailure(err, options.tls ? 'HTTPS' : 'HTTP', options.host, options.port);
  }
  const port = (server.address() as AddressInfo).port;

  /** From now on, answers close their connections (as Envoy's drain and Go's Shutdown do). */
  function drain(): void {
    draining = true;
    for (const socket of open) {
      const last = (socket as Tracked)[LATEST];
      if (last !== undefined && !last.headersSent) last.shouldKeepAlive = false;
    }
  }

  let closing: Promise<void> | undefined;
  return {
    server,
    port,
    protocol: options.tls ? 'https' : 'http',
    get certificate() {
      return certificate;
    },
    reloadTls() {
      if (!options.tls) throw new Error('the server does not serve HTTPS');
      const files = readTlsFiles(options.tls, options.fileSizeLimit);
      const validity = certificateValidity(files.cert);
      (server as https.Server).setSecureContext(files);
      certificate = validity;
      return validity;
    },
    acceptUpgrades(on) {
      server.off('upgrade', onUpgrade);
      if (on) server.on('upgrade', onUpgrade);
    },
    drain,
    close(graceMs = 10_000) {
      closing ??= (async () => {
        drain();
        const closed = new Promise<void>((resolve) => stopListening(server, resolve));
        // Connections with nothing in flight would hold close() open.
        const closeIdle = () => {
          server.closeIdleConnections();
          // Node counts a connection on which nothing has come yet (a browser's
          // preconnect, a load balancer's TCP check) as busy: it would hold
          // close() for the whole grace. Nothing is in flight on it.
          for (const socket of open) if (socket.bytesRead === 0) socket.destroy();
          closeStalledHandshakes();
        };
        let idle: NodeJS.Timeout | undefined;
        let done = false;
        afterNextPoll(() => {
          if (done) return;
          closeIdle();
          idle = setInterval(closeIdle, SWEEP_MS);
        });
        const timer = setTimeout(() => {
          // What is still being answered is cut by the server, not left by its client: the access log says which.
          for (const socket of open) {
            const answer = (socket as Tracked)[LATEST];
            if (answer !== undefined && !answer.writableFinished) markCutShort(answer, 'shutdown');
          }
          server.closeAllConnections();
          // Tunnels (WebSocket) are no HTTP connections Node knows of any more.
          for (const socket of open) socket.destroy();
          for (const socket of tcp) socket.destroy();
        }, graceMs);
        try {
          await closed;
        } finally {
          done = true;
          clearInterval(idle);
          clearTimeout(timer);
        }
      })();
      return closing;
    },
  };
}
