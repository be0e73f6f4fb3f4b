/**
 * @module gatehouse/serving/pipelining
 * Pipelined requests of a connection handled one at a time, as nginx and
 * Envoy handle them. Node's server hands the app every request of a read
 * at once: 64 KB of pipelined `GET /gateway/v0/metrics` is 1,400 requests
 * started in one turn of the event loop, which held every other client for
 * seconds. Their answers go out in order anyway, so the next begins once the
 * one before is done, and the connection is not read meanwhile. A client
 * that sends one request at a time costs nothing more: no listener is
 * added unless a request comes while another is under way.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const RUNNING = Symbol('the answer under way');
const WAITING = Symbol('the requests waiting for it');

interface Connection extends Socket {
  [RUNNING]?: ServerResponse;
  [WAITING]?: [IncomingMessage, ServerResponse][];
}

/**
 * The answer under way is sent and nothing waits behind it: the connection
 * forgets it, rather than hold its request's objects until the next request
 * (every young-generation collection copied them once per open connection).
 * With requests waiting, `advance` needs it until the answer closes.
 */
function forgetFinished(this: ServerResponse): void {
  const socket = this.req.socket as Connection;
  if (socket[RUNNING] === this && socket[WAITING] === undefined) socket[RUNNING] = undefined;
}

/** `handler`, given the requests of each connection one at a time, in order. */
export function oneAtATime(handler: RequestListener): RequestListener {
  /** The answer under way is done: the next request waiting on its connection begins. */
  function advance(this: ServerResponse): void {
    const socket = this.req.socket as Connection;
    const waiting = socket[WAITING];
    if (waiting === undefined || socket[RUNNING] !== this) return;
    for (let next = waiting.shift(); next !== undefined; next = waiting.shift()) {
      const [req, res] = next;
      // Gone with its connection (an answer before it cut short, a client that left): nobody to answer, nothing to act on.
      if (res.destroyed || socket.destroyed) continue;
      socket[RUNNING] = res;
      if (waiting.length > 0) res.on('close', advance);
      else {
        stopWaiting(socket);
        res.on('finish', forgetFinished);
      }
      handler(req, res);
      return;
    }
    socket[RUNNING] = undefined;
    stopWaiting(socket);
  }

  function stopWaiting(socket: Connection): void {
    socket[WAITING] = undefined;
    if (!socket.destroyed) socket.resume();
  }

  return (req, res) => {
    const socket = req.socket as Connection;
    const running = socket[RUNNING];
    if (running === undefined || running.writableFinished || running.destroyed) {
      socket[RUNNING] = res;
      res.on('finish', forgetFinished);
      handler(req, res);
      return;
    }
    let waiting = socket[WAITING];
    if (waiting === undefined) {
      waiting = socket[WAITING] = [];
      running.on('close', advance);
      // What is read already waits; no more is read until it is answered.
      socket.pause();
    }
    waiting.push([req, res]);
  };
}
