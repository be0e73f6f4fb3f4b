/**
 * @module platform/node-http
 * What Gatehouse reads or replaces of Node's HTTP server beyond its
 * documented API, in one place: the response a connection is answering,
 * how a request is destroyed, where the parser hands a request its body,
 * and what `server.close()` does to idle connections. Written against Node
 * 20.20 (package.json's engines); test/platform/node-http.test.ts fails,
 * naming the Node version, when a release changes any of it.
 */
import type http from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** The Node release line these functions were written against. */
export const NODE_HTTP_WRITTEN_FOR = 'v20.20';

/**
 * The response a server connection is writing now (Node's `_httpMessage`):
 * the answer to the request it read last, until that answer is sent.
 */
export function responseInFlight(socket: Socket): http.ServerResponse | null {
  return (socket as Socket & { _httpMessage?: http.ServerResponse | null })._httpMessage ?? null;
}

type Destroy = (err: Error | null, callback: (err: Error | null) => void) => void;

function destroyAlone(err: Error | null, callback: (err: Error | null) => void): void {
  callback(err);
}

/**
 * Makes `req.destroy()` fail the request stream alone: Node's
 * IncomingMessage destroys its socket with it (`_destroy`), and with the
 * socket the chance to answer.
 */
export function destroyKeepingSocket(req: IncomingMessage): void {
  (req as IncomingMessage & { _destroy: Destroy })._destroy = destroyAlone;
}

type Push = (chunk: unknown, encoding?: BufferEncoding) => boolean;

/**
 * Calls `onChunk` with each chunk of `req`'s body as Node's parser hands it
 * to the request (its `push`), before any reader can see it, and with null
 * for the body's end; when `onChunk` returns false the chunk (or the end)
 * is not handed on. No reader, whatever it is, sees a byte or an end
 * `onChunk` refused.
 */
export function watchBodyAsParsed(
  req: IncomingMessage,
  onChunk: (req: IncomingMessage, chunk: Buffer | null) => boolean,
): void {
  const push = req.push.bind(req) as Push;
  (req as unknown as { push: Push }).push = function watchedPush(chunk, encoding) {
    if (!onChunk(req, (chunk ?? null) as Buffer | null)) return true;
    return push(chunk, encoding);
  };
}

function leaveIdle(): void {}

/**
 * `server.close(done)` without closing the idle keep-alive connections,
 * which Node's HTTP server does as it stops listening (its
 * `closeIdleConnections`, since Node 19): a request a client has just sent
 * on one, not yet read, would be lost with it.
 */
export function closeLeavingIdleConnections(server: http.Server, done: () => void): void {
  const own = server as { closeIdleConnections(): void };
  own.closeIdleConnections = leaveIdle;
  try {
    server.close(() => done());
  } finally {
    Reflect.deleteProperty(own, 'closeIdleConnections');
  }
}
