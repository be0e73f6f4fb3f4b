/**
 * @module gatehouse/refusals
 * What the HTTP server answers itself, outside the app, with the project's
 * error body rather than Node's bare status line or a dropped connection: a
 * request Node could not parse, CONNECT, and the checks a request fails
 * before the app may have it. Each is told to the access log.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { errorBody, transferCodingRefusal } from '../http';

/** A request answered by the server itself, before the handler: what can be told of it. */
export interface Rejected {
  status: number;
  method?: string;
  target?: string;
  remote?: string;
}

/** The status Node itself would answer a request it could not parse with. */
function clientErrorStatus(code: string | undefined): number {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  return 400;
}

/**
 * Answers requests that never reach Koa (headers over Node's limit, a
 * malformed request line) with the project's error body instead of Node's
 * bare status line.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket, onRejected?: (request: Rejected) => void): void {
  // Bytes after a request that closes the connection (`Connection: close`,
  // HTTP/1.0): RFC 9112 §9.6 has them ignored, not the connection dropped
  // with the answers still owed to that request and those before it. Node
  // closes the connection once the last of those is sent.
  if (err.code === 'HPE_CLOSED_CONNECTION') return;
  // The request was answered whole already, and the connection closes once
  // the answer is sent (a refusal of checkingRequests): let it be sent.
  const inFlight = (socket as { _httpMessage?: http.ServerResponse | null })._httpMessage;
  if (inFlight && inFlight.writableEnded && !inFlight.shouldKeepAlive) return;
  // A response under way, or a peer that is gone, cannot take an answer.
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight) {
    socket.destroy();
    return;
  }
  const status = clientErrorStatus(err.code);
  onRejected?.({ status, remote: socket.remoteAddress });
  answerAndClose(socket, status);
}

/**
 * Answers CONNECT, which Node hands over as a bare socket: the gateway
 * tunnels nothing, and says so instead of hanging up without a word.
 */
export function answerConnect(req: http.IncomingMessage, socket: Duplex, onRejected?: (request: Rejected) => void): void {
  socket.on('error', () => socket.destroy());
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // The authority asked for, without any user information written before it.
  const target = req.url?.replace(/^[^@/]*@/, '');
  onRejected?.({ status: 501, method: 'CONNECT', target, remote: req.socket.remoteAddress });
  answerAndClose(socket, 501, 'CONNECT is not supported: the gateway does not tunnel');
}

/**
 * `handler`, behind two checks that Node's own would answer with a bare 400
 * that neither has the error body nor reaches the access log, or with
 * nothing at all once the handler has the request:
 * - an HTTP/1.1 request without Host (RFC 9112 §3.2), which Node refuses
 *   unless told not to (`requireHostHeader`);
 * - a `Transfer-Encoding` the gateway cannot serve ({@link transferCodingRefusal}:
 *   one in HTTP/1.0, a coding other than chunked). Node fails such a request
 *   only after it handed it over, when the coding leaves the body without an
 *   end it can find (`gzip`), and serves what follows an HTTP/1.0 one.
 */
export function checkingRequests(handler: http.RequestListener, onRejected?: (request: Rejected) => void): http.RequestListener {
  return (req, res) => {
    const refusal = req.headers['transfer-encoding'] === undefined ? undefined : transferCodingRefusal(req);
    if (refusal !== undefined) {
      refuse(req, res, refusal.status, refusal.detail, onRejected);
    } else if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
      refuse(req, res, 400, 'an HTTP/1.1 request must have a Host header', onRejected);
    } else {
      handler(req, res);
    }
  };
}

/** What the access log writes of a request's target: its path alone, since a query may hold a token. */
function loggedTarget(req: http.IncomingMessage): string | undefined {
  const url = req.url ?? '';
  return url.charCodeAt(0) === 47 ? url.split('?', 1)[0] : undefined;
}

/** Answers a request with the error body and closes the connection: what follows it cannot be read reliably. */
function refuse(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  status: number,
  detail: string | undefined,
  onRejected?: (request: Rejected) => void,
): void {
  onRejected?.({ status, method: req.method, target: loggedTarget(req), remote: req.socket.remoteAddress });
  const body = JSON.stringify(errorBody(status, detail));
  res.shouldKeepAlive = false;
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Writes a whole error response outside Koa and closes the connection. */
function answerAndClose(socket: Duplex, status: number, detail?: string): void {
  const body = JSON.stringify(errorBody(status, detail));
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/** Answers a request the HTTP server handed over with its connection (an upgrade), outside the app, and closes the connection. */
export function refuseOnConnection(
  req: http.IncomingMessage,
  socket: Duplex,
  status: number,
  detail: string,
  onRejected?: (request: Rejected) => void,
): void {
  onRejected?.({ status, method: req.method, target: loggedTarget(req), remote: req.socket.remoteAddress });
  answerAndClose(socket, status, detail);
}
