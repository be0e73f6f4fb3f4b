/**
 * @module gatehouse/serving/client-errors
 * What Node could not parse, answered with the project's error body instead
 * of Node's bare status line: a request that never reached the app, or the
 * body of one the app already has. The connection closes after: nothing
 * behind the error can be framed.
 */
import type http from 'node:http';
import type { Socket } from 'node:net';
import { failRequestBody, HttpError, type ErrorCode } from '../../http';
import { responseInFlight } from '../../platform';
import { answerAndClose, errorAnswer, type RejectedListener } from './refusals';

/** The error of a request Node could not parse, of the status Node itself would answer it with. */
function clientError(code: string | undefined): 'HEADERS_TOO_LARGE' | 'HEADERS_TIMEOUT' | 'REQUEST_MALFORMED' {
  if (code === 'HPE_HEADER_OVERFLOW') return 'HEADERS_TOO_LARGE';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'HEADERS_TIMEOUT';
  return 'REQUEST_MALFORMED';
}

/** Where a connection says that its parse error was answered: Node reports it again with every byte that follows. */
const ANSWERED = Symbol('parse error answered');
type Answering = Socket & { [ANSWERED]?: true };

/** What a body that could not be read is answered with: llhttp's reason, or the time that ran out. */
function bodyProblem(err: NodeJS.ErrnoException & { reason?: string }, parse: ErrorCode): HttpError {
  if (parse === 'HEADERS_TIMEOUT') return HttpError.of('BODY_TIMEOUT');
  if (parse === 'HEADERS_TOO_LARGE') return HttpError.of('TRAILERS_TOO_LARGE');
  return HttpError.of('BODY_MALFORMED', { reason: err.reason ?? err.message });
}

/**
 * Answers what Node could not parse with the project's error body instead
 * of Node's bare status line:
 * - a request that never reached Koa (headers over Node's limit, a
 *   malformed request line), after the answers owed to the requests before
 *   it on the connection;
 * - the body of a request Koa already has (a bad chunk size, data longer
 *   than its chunk, a bare LF, bad trailers, a body too slow to come), once
 *   Node has handed the request to the app: the app answers it, and the
 *   access log writes it, as any request. `latest` is the response of the
 *   last request read on the connection.
 * The connection closes after: nothing behind the error can be framed.
 */
export function answerClientError(
  err: NodeJS.ErrnoException,
  socket: Socket,
  onRejected?: RejectedListener,
  latest?: http.ServerResponse,
): void {
  // Bytes after a request that closes the connection (`Connection: close`,
  // HTTP/1.0): RFC 9112 §9.6 has them ignored, not the connection dropped
  // with the answers still owed to that request and those before it. Node
  // closes the connection once the last of those is sent.
  if (err.code === 'HPE_CLOSED_CONNECTION') return;
  const answering = socket as Answering;
  if (answering[ANSWERED]) return;
  // The request was answered whole already, and the connection closes once
  // the answer is sent (a refusal of checkingRequests): let it be sent.
  const inFlight = responseInFlight(answering);
  if (inFlight && inFlight.writableEnded && !inFlight.shouldKeepAlive) return;
  // A peer that is gone cannot take an answer.
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const error = clientError(err.code);
  if (latest !== undefined && !latest.req.complete) {
    // The client ended its side before its body: it left, as far as this request goes (499).
    if (err.code === 'HPE_INVALID_EOF_STATE') {
      socket.destroy();
      return;
    }
    answering[ANSWERED] = true;
    refuseBody(latest, socket, bodyProblem(err, error));
    return;
  }
  if (inFlight) {
    if (latest === undefined || latest.destroyed) {
      socket.destroy();
      return;
    }
    // A request that could not be read behind others still being answered: it is answered after them.
    answering[ANSWERED] = true;
    const refusal = HttpError.of(error);
    const answer = errorAnswer(undefined, refusal);
    onRejected?.({ status: refusal.status, remote: socket.remoteAddress, requestId: answer.requestId }, error);
    latest.once('finish', () => {
      // Unless that answer closed the connection (a drain).
      if (!socket.writableEnded) answerAndClose(socket, refusal.status, answer);
    });
    return;
  }
  answering[ANSWERED] = true;
  const refusal = HttpError.of(error);
  const answer = errorAnswer(undefined, refusal);
  onRejected?.({ status: refusal.status, remote: socket.remoteAddress, requestId: answer.requestId }, error);
  answerAndClose(socket, refusal.status, answer);
}

/**
 * Fails the body of a request the app already has with `answer`, and has
 * the connection close after the request's response. The app answers: a
 * module reading the body, the proxy streaming it and the auth stage
 * sending it fail with that error, and the gateway answers it in place of
 * whatever a module that did not read the body answered. An answer
 * already under way is let finish.
 */
function refuseBody(res: http.ServerResponse, socket: Socket, answer: HttpError): void {
  if (res.writableEnded) socket.end();
  else if (!res.headersSent) res.shouldKeepAlive = false;
  else res.once('finish', () => socket.end());
  failRequestBody(res.req, answer);
}
