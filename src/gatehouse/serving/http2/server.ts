/**
 * @module gatehouse/serving/http2/server
 * The HTTP/2 side of a listener. It never listens itself: the listener
 * hands it each connection that chose HTTP/2 (the preface on the
 * cleartext port, ALPN `h2` over TLS), and it serves each stream's request
 * to the same handler as HTTP/1.1's, through ./request and ./response. It
 * answers itself what HTTP/2 asks of a server before the app (CONNECT,
 * expectations, a Host that contradicts `:authority`), bounds how long a
 * connection may take to exchange its SETTINGS and stay idle, and drains
 * by GOAWAY where HTTP/1.1 says `Connection: close`.
 */
import type { RequestListener } from 'node:http';
import http2, { constants, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { HttpError, markCutShort } from '../../../http';
import { refuse, type RejectedListener } from '../refusals';
import {
  headerListSize,
  http2ServerOptions,
  maxHeaderListSize,
  PREMATURE_RESET_MIN_STREAMS,
  SETTINGS_TIMEOUT_MS,
  type Http2Limits,
} from './limits';
import { Http2Request, REQUEST } from './request';
import { Http2Response, RESPONSE } from './response';
import { sweepHttp2 } from './timeouts';

export interface Http2ServingOptions {
  /** Serves each request, as the HTTP/1.1 server's request listener does (with its checks). */
  readonly handler: RequestListener;
  readonly limits?: Http2Limits;
  /** How long a connection may take to send its SETTINGS and acknowledge the gateway's, in ms. */
  readonly handshakeTimeoutMs: number;
  /** How long a connection with no stream open is kept, in ms; 0 keeps it. */
  readonly idleTimeoutMs: number;
  /** How long a request's body may take to come whole, in ms; 0 waits for ever. */
  readonly requestTimeoutMs: number;
  /** Told of each request answered here, before the handler. */
  readonly onRejected?: RejectedListener;
}

/** The HTTP/2 connections of a listener. */
export interface Http2Serving {
  readonly server: http2.Http2Server;
  /** Serves `socket` (paused, its first bytes unread) as an HTTP/2 connection. */
  accept(socket: Socket): void;
  /** Connections open now. */
  readonly connections: number;
  /**
   * Sends every connection a GOAWAY: what it sent so far is answered, and
   * it closes once its streams are done; a connection opened later is sent
   * one once its first requests are in.
   */
  drain(): void;
  /** Closes every connection at once; answers still under way are logged as cut by the shutdown. */
  cut(): void;
  /** Stops looking for idle connections: the listener is closed. */
  stop(): void;
}

/** What the listener keeps of an HTTP/2 connection. */
interface Connection {
  readonly socket: Socket;
  readonly session: ServerHttp2Session;
  /** Streams open now. */
  open: number;
  /** Streams begun, and those of them the client reset before their answer was done. */
  streams: number;
  resets: number;
  /** The sweep at which its last stream closed, or it opened (./timeouts). */
  idleSince: number;
}
const CONNECTION = Symbol('http2 connection');
type Carrying = { [CONNECTION]?: Connection };
type Stream = ServerHttp2Stream & { [REQUEST]?: Http2Request; [RESPONSE]?: Http2Response };

function ignore(): void {}

/**
 * A connection whose client resets most of the streams it opens before
 * they are answered (HTTP/2 "rapid reset", CVE-2023-44487) makes the
 * gateway start work it then throws away: once it has opened
 * {@link PREMATURE_RESET_MIN_STREAMS} streams, and reset at least half,
 * it is closed with ENHANCE_YOUR_CALM, as Envoy closes it.
 */
function countReset(connection: Connection): void {
  connection.resets++;
  if (connection.resets < PREMATURE_RESET_MIN_STREAMS || connection.resets * 2 < connection.streams) return;
  const session = connection.session;
  if (session.destroyed) return;
  session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM);
  session.destroy();
}

/** Builds the HTTP/2 side of a listener. */
export function createHttp2Serving(options: Http2ServingOptions): Http2Serving {
  const { handler, onRejected } = options;
  const server = http2.createServer(http2ServerOptions(options.limits));
  const connections = new Set<Connection>();
  let accepting: Socket | undefined;
  let draining = false;
  let cutting = false;
  const sweeper = sweepHttp2({
    idleTimeoutMs: options.idleTimeoutMs,
    requestTimeoutMs: options.requestTimeoutMs,
    connections,
  });

  /** Closes `session` once what it sent in this read is in: a GOAWAY names the last stream it takes. */
  function closeSoon(session: ServerHttp2Session): void {
    setImmediate(() => {
      if (!session.closed && !session.destroyed) session.close();
    });
  }

  function onStreamClose(this: Stream): void {
    const res = this[RESPONSE];
    const req = this[REQUEST];
    if (res === undefined || req === undefined) return;
    const connection = (req.socket as Carrying)[CONNECTION]!;
    if (--connection.open === 0) connection.idleSince = sweeper.now;
    sweeper.done(req);
    if (!res.writableFinished) {
      if (cutting) markCutShort(res as never, 'shutdown');
      else if (this.rstCode !== undefined && this.rstCode !== constants.NGHTTP2_NO_ERROR) countReset(connection);
    }
    res.streamClosed();
    req.streamClosed();
  }

  /** The answer is sent while the client still sends its body: it is told to stop, without error (RFC 9113 §8.1). */
  function onAnswered(this: Stream): void {
    const req = this[REQUEST];
    if (req !== undefined && !req.complete && !this.closed) this.close(constants.NGHTTP2_NO_ERROR);
  }

  const maxListSize = maxHeaderListSize();

  /** What HTTP/2 asks of a server before the app: refused here with the error body, as over HTTP/1.1. */
  function refusal(req: Http2Request, res: Http2Response, raw: readonly string[]): HttpError | undefined {
    if (headerListSize(raw) > maxListSize) return HttpError.of('HEADERS_TOO_LARGE');
    const headers = req.headers;
    if (req.method === 'CONNECT') return HttpError.of('CONNECT_NOT_SUPPORTED');
    const authority = headers[':authority'];
    if (authority !== undefined && headers.host !== authority) return HttpError.of('AUTHORITY_MISMATCH');
    const expect = headers.expect;
    if (expect !== undefined) {
      if (expect.toLowerCase() !== '100-continue') return HttpError.of('EXPECTATION_UNSUPPORTED');
      res.writeContinue();
    }
    return undefined;
  }

  function onStream(
    this: ServerHttp2Session & Carrying,
    stream: Stream,
    headers: http2.IncomingHttpHeaders,
    _flags: number,
    rawHeaders: string[],
  ): void {
    const connection = this[CONNECTION]!;
    connection.streams++;
    // Reset before its turn came (a client resetting streams as fast as it opens them): nothing to answer.
    if (stream.destroyed) {
      countReset(connection);
      return;
    }
    connection.open++;
    stream.on('error', ignore);
    stream.on('close', onStreamClose);
    const req = new Http2Request(stream, headers, rawHeaders, connection.socket);
    if (!req.complete) {
      stream.on('finish', onAnswered);
      sweeper.receiving(req);
    }
    const res = new Http2Response(stream, req);
    if (draining) closeSoon(this);
    const refused = refusal(req, res, rawHeaders);
    if (refused !== undefined) refuse(req as never, res as never, refused, onRejected);
    else handler(req as never, res as never);
  }

  server.on('session', (session: ServerHttp2Session & Carrying) => {
    const socket = accepting! as Socket & Carrying;
    const connection: Connection = { socket, session, open: 0, streams: 0, resets: 0, idleSince: sweeper.now };
    session[CONNECTION] = connection;
    socket[CONNECTION] = connection;
    connections.add(connection);
    socket.once('close', () => connections.delete(connection));
    // Koa's on-finished listens to the socket of each streamed answer, and here streams share one socket:
    // as many listeners as streams open at once, which maxConcurrentStreams bounds.
    socket.setMaxListeners(0);
    session.on('stream', onStream);
    // A reset connection, or one closed for what its client sent, is the client's business.
    session.on('error', ignore);
    let settled = 0;
    const handshake = setTimeout(
      () => {
        if (settled >= 2 || session.destroyed) return;
        session.goaway(constants.NGHTTP2_SETTINGS_TIMEOUT);
        session.destroy();
      },
      Math.min(options.handshakeTimeoutMs, SETTINGS_TIMEOUT_MS),
    );
    handshake.unref();
    const settle = () => {
      if (++settled === 2) clearTimeout(handshake);
    };
    session.once('remoteSettings', settle);
    session.once('localSettings', settle);
    session.once('close', () => clearTimeout(handshake));
  });

  return {
    server,
    accept(socket) {
      accepting = socket;
      try {
        server.emit('connection', socket);
      } finally {
        accepting = undefined;
      }
    },
    get connections() {
      return connections.size;
    },
    drain() {
      draining = true;
      for (const { session } of connections) if (!session.closed && !session.destroyed) session.close();
    },
    stop() {
      sweeper.stop();
    },
    cut() {
      draining = true;
      cutting = true;
      for (const { session } of connections) session.destroy();
      for (const { socket } of connections) socket.destroy();
    },
  };
}
