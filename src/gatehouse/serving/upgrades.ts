/**
 * @module gatehouse/serving/upgrades
 * The server's side of protocol upgrades (WebSocket). Once Node's HTTP server
 * has an `upgrade` listener, it hands every request that names an `Upgrade`
 * to it, off HTTP, with no response: this listener gives such a request back
 * to the app, so that it is routed, authenticated and logged as any other,
 * and the gateway may tunnel it (see gateway/upstream/upgrade).
 *
 * - A request without a body gets a response of its own on its connection,
 *   and the connection, marked on the request; unless the gateway switches
 *   it to the new protocol, it is answered as plain HTTP (RFC 9110 §7.8) and
 *   the connection closed, since what came after the request was not read.
 * - A request with a body (`curl --http2 -d`) cannot have switched before its
 *   body was sent: it goes back to the HTTP server without its `Upgrade`, and
 *   is served as plain HTTP on a connection that stays open.
 *
 * Either way, a request pipelined behind another waits until that one is
 * answered.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { handOverUpgrade, hasRequestBody, HttpError, ListedHeadersResponse } from '../../http';

/** What the listener needs of the server it serves. */
export interface UpgradeServing {
  /** The server's request listener, with its checks. */
  readonly serve: http.RequestListener;
  /** Serves a connection as HTTP/1.1 from what it holds unread. */
  serveConnection(socket: Socket): void;
  /** Whether the server is closing: no connection switches protocols then. */
  draining(): boolean;
  /** The answer to a request read before, on the same connection, that is not sent yet. */
  answering(socket: Duplex): http.ServerResponse | undefined;
  /** Answers a request outside the app, with the error body, and closes its connection. */
  refuse(req: http.IncomingMessage, socket: Duplex, refusal: HttpError): void;
}

/** The request's head as it came, but for its `Upgrade` lines. */
function headWithoutUpgrade(req: http.IncomingMessage): Buffer {
  let text = `${req.method} ${req.url} HTTP/${req.httpVersion}\r\n`;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 7 && raw[i].toLowerCase() === 'upgrade') continue;
    text += `${raw[i]}: ${raw[i + 1]}\r\n`;
  }
  // Node reads header bytes one character each: written back the same way, they are the bytes that came.
  return Buffer.from(`${text}\r\n`, 'latin1');
}

/** Builds the `upgrade` listener of a server. */
export function upgradeListener(
  serving: UpgradeServing,
): (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void {
  function handle(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    if (serving.draining()) {
      serving.refuse(req, socket, HttpError.of('SHUTTING_DOWN'));
      return;
    }
    if (hasRequestBody(req)) {
      // Read again from the start, as the HTTP server reads any request.
      if (head.length > 0) socket.unshift(head);
      socket.unshift(headWithoutUpgrade(req));
      serving.serveConnection(socket as Socket);
      return;
    }
    const res = new ListedHeadersResponse(req);
    // What the client sent behind the request is the new protocol's, or unread: the connection ends with the answer.
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    // Left assigned, the response is told when the connection closes, as the access log waits to be.
    res.once('finish', () => (socket as Socket).destroySoon());
    handOverUpgrade(req, { socket, head });
    serving.serve(req, res);
  }

  return (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    // Node hands the request over as soon as it is read, even behind a
    // pipelined request still being answered: answers go out in order, so
    // this one waits for that answer to be sent.
    const earlier = serving.answering(socket);
    if (earlier === undefined) handle(req, socket, head);
    else earlier.once('close', () => (socket.destroyed ? undefined : handle(req, socket, head)));
  };
}
