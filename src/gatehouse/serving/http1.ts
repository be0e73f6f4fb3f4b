/**
 * @module gatehouse/serving/http1
 * The HTTP/1.1 side of a listener: Node's HTTP (or HTTPS) server, which
 * also holds the listening socket, with the gateway's own answers to what
 * Node would answer bare (./refusals, ./client-errors), pipelined requests
 * one at a time (./pipelining), upgrades (./upgrades), and, per connection,
 * the answer to the last request read on it, which a drain marks
 * `Connection: close`.
 */
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ListedHeadersResponse } from '../../http';
import { oneAtATime } from './pipelining';
import { answerClientError } from './client-errors';
import { answerConnect, refuseExpectation, refuseOnConnection, type RejectedListener } from './refusals';
import type { ContextStore } from './tls-contexts';
import { upgradeListener } from './upgrades';

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

export interface Http1Options {
  /** The request listener, with the checks every request passes (see checkingRequests). */
  readonly checked: http.RequestListener;
  /** HTTPS: the certificate of connections that name no host, and the store that picks the others'. */
  readonly tls?: { cert: Buffer; key: Buffer; contexts: ContextStore };
  /** HTTPS with these options instead, whatever chooses its certificates (see ListenOptions.secure). */
  readonly secure?: https.ServerOptions;
  readonly handshakeTimeoutMs?: number;
  readonly keepAliveTimeoutMs: number;
  /** How long a request's head, and a whole request, may take to come before a 408, in ms. */
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** How often connections are checked against those two, in ms. */
  readonly timeoutCheckIntervalMs: number;
  readonly onRejected?: RejectedListener;
  /** Whether the listener has taken `socket` (over TLS: once its handshake is done). */
  readonly taken: (socket: Socket) => boolean;
}

/** The HTTP/1.1 side of a listener. */
export interface Http1Serving {
  /** Node's server, which listens for the whole listener. */
  readonly server: http.Server | https.Server;
  /** The event on which it takes a connection: `secureConnection` over TLS. */
  readonly connectionEvent: 'connection' | 'secureConnection';
  /** Serves `socket` as an HTTP/1.1 connection (Node's own connection listener). */
  serveConnection(socket: Socket): void;
  /** The answer to the last request read on `socket`, while it is not sent. */
  answering(socket: Socket): http.ServerResponse | undefined;
  /** Answers not yet begun, and all answers from now on, close their connections. */
  drain(open: Iterable<Socket>): void;
  /** Whether it drains. */
  readonly draining: boolean;
  acceptUpgrades(on: boolean): void;
}

/** Builds the HTTP/1.1 side. Its server's connection listener is left for the caller to put in front of. */
export function createHttp1Serving(options: Http1Options): Http1Serving {
  const { onRejected } = options;
  const checked = oneAtATime(options.checked);
  // Once closing, every answer not yet begun says Connection: close (as Envoy's
  // drain and Go's Shutdown do): an answer that said keep-alive invites the
  // client's next request onto a connection that is about to be cut, and that
  // request is lost (a 503 from a proxy in front, a POST that cannot be retried).
  let draining = false;
  const serve: http.RequestListener = (req, res) => {
    // The last request read on a connection: pipelined ones are answered in
    // order, so this is the answer that ends it when closing.
    (req.socket as Tracked)[LATEST] = res;
    // A function of this module, not a closure: nothing is made for it per request.
    res.on('finish', forgetSent);
    if (draining) res.shouldKeepAlive = false;
    checked(req, res);
  };
  const tls = options.tls;
  // `secure` comes with its own certificate chooser; `tls` with the listener's context store.
  const tlsOptions: https.ServerOptions | undefined =
    options.secure ??
    (tls && {
      cert: tls.cert,
      key: tls.key,
      SNICallback: tls.contexts.sniCallback,
      ALPNCallback: tls.contexts.alpnCallback,
    });
  const overTls = tlsOptions !== undefined;
  const httpOptions: http.ServerOptions = {
    headersTimeout: options.headersTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    connectionsCheckingInterval: options.timeoutCheckIntervalMs,
    requireHostHeader: false,
    ServerResponse: ListedHeadersResponse,
  };
  const server = overTls
    ? https.createServer({ ...tlsOptions, ...httpOptions, handshakeTimeout: options.handshakeTimeoutMs }, serve)
    : http.createServer(httpOptions, serve);
  server.keepAliveTimeout = options.keepAliveTimeoutMs;
  // Every field reaches the gateway's own bound (headerCountRefusal), which answers with its detail on
  // every Node: past a count, Node 20 drops fields and Node 22 and 24 refuse the request in the parser,
  // without it. Node's header size limit still bounds how many fields a request can carry.
  server.maxHeadersCount = 0;
  const connectionEvent = overTls ? 'secureConnection' : 'connection';
  // Node's own listener, made by the server's constructor: the listener decides which connections it gets.
  const [nodeTakes] = server.listeners(connectionEvent) as ((socket: Socket) => void)[];
  server.removeListener(connectionEvent, nodeTakes);
  const serveConnection = (socket: Socket) => nodeTakes.call(server, socket);

  function answering(socket: Duplex): http.ServerResponse | undefined {
    const last = (socket as Tracked)[LATEST];
    return last !== undefined && !last.writableFinished && !last.destroyed ? last : undefined;
  }
  const onUpgrade = upgradeListener({
    serve,
    serveConnection,
    draining: () => draining,
    answering,
    refuse: (req, socket, refusal) => refuseOnConnection(req, socket, refusal, onRejected),
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // A TLS connection that failed before its handshake was done (it timed
    // out, the client spoke plain HTTP or an old TLS) has no HTTP to answer
    // in, nor a request to log: an answer written into it would wait for a
    // handshake that never comes, and keep the connection open.
    if (overTls && !options.taken(socket)) socket.destroy();
    else answerClientError(err, socket, onRejected, (socket as Tracked)[LATEST]);
  });
  server.on('connect', (req: http.IncomingMessage, socket: Duplex) => answerConnect(req, socket, onRejected));
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) =>
    refuseExpectation(req, res, onRejected),
  );

  return {
    server,
    connectionEvent,
    serveConnection,
    answering,
    get draining() {
      return draining;
    },
    drain(open) {
      draining = true;
      for (const socket of open) {
        const last = (socket as Tracked)[LATEST];
        if (last !== undefined && !last.headersSent) last.shouldKeepAlive = false;
      }
    },
    acceptUpgrades(on) {
      server.off('upgrade', onUpgrade);
      if (on) server.on('upgrade', onUpgrade);
    },
  };
}

/** The answer to the last request read on an HTTP/1.1 connection, until it is sent and its request read whole. */
export function latestAnswer(socket: Socket): http.ServerResponse | undefined {
  return (socket as Tracked)[LATEST];
}
