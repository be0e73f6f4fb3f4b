/**
 * @module gatehouse/serving/closing
 * How a listener closes: it stops accepting, answers what clients already
 * sent, lets the requests in flight finish for a grace period, then cuts
 * what is left, marking each answer still under way as cut by the
 * shutdown for the access log. HTTP/2 connections were sent a GOAWAY by
 * the drain, and close as their last stream ends.
 */
import type http from 'node:http';
import type { Socket } from 'node:net';
import { markCutShort } from '../../http';
import { closeLeavingIdleConnections } from '../../platform';
import type { Undecided } from './first-bytes';
import { latestAnswer } from './http1';
import type { Http2Serving } from './http2';

/** What a closing listener looks after. */
export interface Closable {
  /** The server that listens (HTTP/1.1's). */
  readonly server: http.Server;
  /** Connections taken: over TLS, once their handshake is done. */
  readonly open: ReadonlySet<Socket>;
  /** TLS: every TCP connection, its handshake done or not. */
  readonly tcp: ReadonlySet<Socket>;
  /** Cleartext connections still to say which protocol they speak. */
  readonly undecided: Undecided;
  readonly http2?: Http2Serving;
}

/** How often a closing server looks for connections with nothing in flight, to close them. */
const SWEEP_MS = 100;

/**
 * Runs `fn` once the event loop has polled its connections again: whatever
 * a client sent before now has been read by then, and a request begun on a
 * connection makes it busy.
 */
function afterNextPoll(fn: () => void): void {
  // One turn may still be in the poll phase that read before the bytes came; the second is past the next.
  setImmediate(() => setImmediate(fn));
}

/**
 * Closes the TLS connections whose handshake is not done and has not moved
 * since the last sweep: no request can be in flight on them. One under way
 * is let finish, and its request answered. `progress` is what each had read
 * at the sweep before.
 */
function closeStalledHandshakes(listener: Closable, progress: WeakMap<Socket, number>): void {
  if (listener.tcp.size === 0) return;
  // A TLS connection is its TCP connection: the same peer address and port.
  const secured = new Set<string>();
  for (const socket of listener.open) secured.add(`${socket.remoteAddress}|${socket.remotePort}`);
  for (const socket of listener.tcp) {
    if (secured.has(`${socket.remoteAddress}|${socket.remotePort}`)) continue;
    if (progress.get(socket) === socket.bytesRead) socket.destroy();
    else progress.set(socket, socket.bytesRead);
  }
}

/**
 * Stops `listener` accepting and resolves once its last connection is
 * closed, at most `graceMs` later. Stops listening leaving the open
 * connections be: Node's HTTP server closes its idle keep-alive connections
 * as it stops listening (Node 19 and later), and a request the client had
 * just sent on one, not read yet, was lost with it (the client's
 * ECONNRESET), as was one on a connection just accepted. They are closed
 * once what was sent has been read.
 */
export async function closeServer(listener: Closable, graceMs: number): Promise<void> {
  const { server, open, tcp, undecided } = listener;
  const closed = new Promise<void>((resolve) => closeLeavingIdleConnections(server, resolve));
  const handshakeProgress = new WeakMap<Socket, number>();
  // Connections with nothing in flight would hold close() open.
  const closeIdle = () => {
    server.closeIdleConnections();
    // Node counts a connection on which nothing has come yet (a browser's
    // preconnect, a load balancer's TCP check) as busy: it would hold
    // close() for the whole grace. Nothing is in flight on it.
    for (const socket of open) if (socket.bytesRead === 0) socket.destroy();
    // Nor on one that has not said which protocol it speaks.
    for (const socket of undecided) socket.destroy();
    closeStalledHandshakes(listener, handshakeProgress);
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
      const answer = latestAnswer(socket);
      if (answer !== undefined && !answer.writableFinished) markCutShort(answer, 'shutdown');
    }
    listener.http2?.cut();
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
    listener.http2?.stop();
  }
}
