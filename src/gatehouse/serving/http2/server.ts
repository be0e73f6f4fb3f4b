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
import { http2ServerOptions, type Http2Limits } from './limits';
import { Http2Request, REQUEST } from './request';
import { Http2Response, RESPONSE } from './response';

export interface Http2ServingOptions {
  /** Serves each request, as the HTTP/1.1 server's request listener does (with its checks). */
  readonly handler: RequestListener;
  readonly limits?: Http2Limits;
  /** How long a connection may take to send its SETTINGS and acknowledge the gateway's, in ms. */
  readonly handshakeTimeoutMs: number;
  /** How long a connection with no stream open is kept, in ms; 0 keeps it. */
  readonly idleTimeoutMs: number;
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
}

/** What the listener keeps on a connection's socket for HTTP/2. */
const SESSION = Symbol('http2 session');
const OPEN_STREAMS = Symbol('streams open');
type Carrying = Socket & { [SESSION]?: ServerHttp2Session; [OPEN_STREAMS]?: number };
/** Where a session keeps the socket it was made on, as accepted (not Node's proxy of it). */
const SESSION_SOCKET = Symbol('session socket');
type Session = ServerHttp2Session & { [SESSION_SOCKET]?: Carrying };
type Stream = ServerHttp2Stream & { [REQUEST]?: Http2Request; [RESPONSE]?: Http2Response };

function ignore(): void {}

/** Builds the HTTP/2 side of a listener. */
export function createHttp2Serving(options: Http2ServingOptions): Http2Serving {
  const { handler, onRejected } = options;
  const server = http2.createServer(http2ServerOptions(options.limits));
  const sockets = new Set<Carrying>();
  let accepting: Carrying | undefined;
  let draining = false;
  let cutting = false;

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
    const socket = req.socket as Carrying;
    socket[OPEN_STREAMS] = (socket[OPEN_STREAMS] ?? 1) - 1;
    if (cutting && !res.writableFinished) markCutShort(res as never, 'shutdown');
    res.streamClosed();
    req.streamClosed();
  }

  /** The answer is sent while the client still sends its body: it is told to stop, without error (RFC 9113 §8.1). */
  function onAnswered(this: Stream): void {
    const req = this[REQUEST];
    if (req !== undefined && !req.complete && !this.closed) this.close(constants.NGHTTP2_NO_ERROR);
  }

  /** What HTTP/2 asks of a server before the app: refused here with the error body, as over HTTP/1.1. */
  function refusal(req: Http2Request, res: Http2Response): HttpError | undefined {
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

  server.on('stream', (stream: Stream, headers: http2.IncomingHttpHeaders, _flags: number, rawHeaders: string[]) => {
    const socket = (stream.session as Session)[SESSION_SOCKET]!;
    socket[OPEN_STREAMS] = (socket[OPEN_STREAMS] ?? 0) + 1;
    stream.on('error', ignore);
    stream.once('close', onStreamClose);
    stream.once('finish', onAnswered);
    const req = new Http2Request(stream, headers, rawHeaders, socket);
    const res = new Http2Response(stream, req);
    if (draining) closeSoon(socket[SESSION]!);
    const refused = refusal(req, res);
    if (refused !== undefined) refuse(req as never, res as never, refused, onRejected);
    else handler(req as never, res as never);
  });

  server.on('session', (session: Session) => {
    const socket = accepting!;
    session[SESSION_SOCKET] = socket;
    socket[SESSION] = session;
    socket[OPEN_STREAMS] = 0;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // A reset connection, or one closed for what its client sent, is the client's business.
    session.on('error', ignore);
    let settled = 0;
    const handshake = setTimeout(() => {
      if (settled >= 2 || session.destroyed) return;
      session.goaway(constants.NGHTTP2_SETTINGS_TIMEOUT);
      session.destroy();
    }, options.handshakeTimeoutMs);
    handshake.unref();
    const settle = () => {
      if (++settled === 2) clearTimeout(handshake);
    };
    session.once('remoteSettings', settle);
    session.once('localSettings', settle);
    session.once('close', () => clearTimeout(handshake));
    if (options.idleTimeoutMs > 0) {
      session.setTimeout(options.idleTimeoutMs, () => {
        if ((socket[OPEN_STREAMS] ?? 0) === 0 && !session.closed) session.close();
      });
    }
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
      return sockets.size;
    },
    drain() {
      draining = true;
      for (const socket of sockets) {
        const session = socket[SESSION];
        if (session !== undefined && !session.closed && !session.destroyed) session.close();
      }
    },
    cut() {
      draining = true;
      cutting = true;
      for (const socket of sockets) socket[SESSION]?.destroy();
      for (const socket of sockets) socket.destroy();
    },
  };
}
