/**
 * @module gatehouse/serving/refusals
 * What the HTTP server answers itself, outside the app, with the project's
 * error body rather than Node's bare status line or a dropped connection:
 * CONNECT, an `Expect` it cannot meet, and the checks a request fails before
 * the app may have it; and how such an answer is written, which
 * ./client-errors writes too for what Node could not parse. Each is told to
 * the access log.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import {
  createFormatterRegistry,
  errorBody,
  headerCountRefusal,
  HttpError,
  jsonFormatter,
  protocolOf,
  transferCodingRefusal,
  type ErrorCode,
} from '../../http';
import { wellFormedRequestId } from '../../telemetry';

/** A request answered by the server itself, before the handler: what can be told of it. */
export interface Rejected {
  status: number;
  method?: string;
  target?: string;
  remote?: string;
  /** The request id it was answered with: the client's when well-formed. */
  requestId?: string;
  /** HTTP/1.1 or HTTP/2, when the request could be read. */
  protocol?: string;
}

/** Told of each request the server answers itself, with the registry's code of the error it was answered with. */
export type RejectedListener = (request: Rejected, error: ErrorCode | undefined) => void;

/** The representations an error body is negotiated among, as the app's error handler does. */
const FORMATTERS = createFormatterRegistry();

/** An error answer written outside the app: its headers and body. */
export interface ErrorAnswer {
  readonly requestId: string;
  readonly headers: Record<string, string | number>;
  readonly body: string;
}

/**
 * The error answer to a request the server answers itself: in the
 * representation its `Accept` chooses (JSON when there is no request, or
 * nothing acceptable), with its request id (the client's when
 * well-formed), as the app answers.
 */
export function errorAnswer(req: http.IncomingMessage | undefined, error: HttpError): ErrorAnswer {
  const formatter = (req === undefined ? undefined : FORMATTERS.select(req)) ?? jsonFormatter;
  const body = formatter.format(errorBody(error.status, error.detail));
  const requestId = wellFormedRequestId(req?.headers['x-request-id']) ?? randomUUID();
  const headers: Record<string, string | number> = {
    'Content-Type': formatter.contentType ?? formatter.type,
    'Content-Length': Buffer.byteLength(body),
    'X-Request-Id': requestId,
  };
  if (req !== undefined) headers.Vary = 'Accept';
  return { requestId, headers, body };
}

/**
 * Answers CONNECT, which Node hands over as a bare socket: the gateway
 * tunnels nothing, and says so instead of hanging up without a word.
 */
export function answerConnect(req: http.IncomingMessage, socket: Duplex, onRejected?: RejectedListener): void {
  socket.on('error', () => socket.destroy());
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // The authority asked for, without any user information written before it.
  const target = req.url?.replace(/^[^@/]*@/, '');
  const refusal = HttpError.of('CONNECT_NOT_SUPPORTED');
  const answer = errorAnswer(req, refusal);
  onRejected?.(
    {
      status: refusal.status,
      method: 'CONNECT',
      target,
      remote: req.socket.remoteAddress,
      protocol: protocolOf(req),
      requestId: answer.requestId,
    },
    refusal.code,
  );
  answerAndClose(socket, refusal.status, answer);
}

/**
 * Answers a request whose `Expect` asks for something other than
 * `100-continue`, which Node would answer with a bare 417: with the error
 * body, told to the access log, and the connection closed, since the body
 * the client may send anyway cannot be told from a next request.
 */
export function refuseExpectation(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  onRejected?: RejectedListener,
): void {
  refuse(req, res, HttpError.of('EXPECTATION_UNSUPPORTED'), onRejected);
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
 *   end it can find (`gzip`), and serves what follows an HTTP/1.0 one;
 * - more header fields than `MAX_REQUEST_HEADERS` (src/http), past which Node
 *   drops fields from the request while still framing its body by them.
 */
export function checkingRequests(handler: http.RequestListener, onRejected?: RejectedListener): http.RequestListener {
  return (req, res) => {
    const refusal =
      headerCountRefusal(req.rawHeaders) ??
      (req.headers['transfer-encoding'] === undefined ? undefined : transferCodingRefusal(req));
    if (refusal !== undefined) {
      refuse(req, res, refusal, onRejected);
    } else if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
      refuse(req, res, HttpError.of('HOST_MISSING'), onRejected);
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

/** What the access log is told of a request refused outside Koa. */
function rejectedRequest(req: http.IncomingMessage, refusal: HttpError, answer: ErrorAnswer): Rejected {
  return {
    status: refusal.status,
    method: req.method,
    target: loggedTarget(req),
    remote: req.socket.remoteAddress,
    protocol: protocolOf(req),
    requestId: answer.requestId,
  };
}

/**
 * Answers a request with the error body, told to the access log; over
 * HTTP/1.1 the connection closes after it: what follows it cannot be read
 * reliably.
 */
export function refuse(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  refusal: HttpError,
  onRejected?: RejectedListener,
): void {
  const answer = errorAnswer(req, refusal);
  onRejected?.(rejectedRequest(req, refusal, answer), refusal.code);
  res.shouldKeepAlive = false;
  res.writeHead(refusal.status, answer.headers);
  res.end(answer.body);
}

/** Writes a whole error response outside Koa and closes the connection. */
export function answerAndClose(socket: Duplex, status: number, answer: ErrorAnswer): void {
  let head = `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n`;
  for (const [name, value] of Object.entries(answer.headers)) head += `${name}: ${value}\r\n`;
  socket.end(`${head}Connection: close\r\n\r\n${answer.body}`);
}

/** Answers a request the HTTP server handed over with its connection (an upgrade), outside the app, and closes the connection. */
export function refuseOnConnection(
  req: http.IncomingMessage,
  socket: Duplex,
  refusal: HttpError,
  onRejected?: RejectedListener,
): void {
  const answer = errorAnswer(req, refusal);
  onRejected?.(rejectedRequest(req, refusal, answer), refusal.code);
  answerAndClose(socket, refusal.status, answer);
}
