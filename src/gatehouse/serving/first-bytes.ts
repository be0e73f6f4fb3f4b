/**
 * @module gatehouse/serving/first-bytes
 * HTTP/1.1 and HTTP/2 with prior knowledge (h2c) on one cleartext port, told
 * apart by what a connection sends first, as Envoy tells them apart: the
 * HTTP/2 connection preface, or anything else. The bytes read to decide are
 * put back before the connection is handed over, so each protocol's server
 * reads the connection from its first byte.
 */
import type { Socket } from 'node:net';

/** The 24 bytes every HTTP/2 client sends first (RFC 9113, section 3.4). */
export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** What a connection speaks, by the bytes it sent first. */
export type FirstBytesProtocol = 'h2' | 'http/1.1';

/**
 * The protocol `bytes` (the first a connection sent) begin, or undefined
 * while they are a proper prefix of the HTTP/2 preface and could still
 * become it. The method `PRI` alone is no HTTP/2: only the whole preface is.
 */
export function protocolOfFirstBytes(bytes: Buffer): FirstBytesProtocol | undefined {
  const compared = Math.min(bytes.length, HTTP2_PREFACE.length);
  if (bytes.compare(HTTP2_PREFACE, 0, compared, 0, compared) !== 0) return 'http/1.1';
  return compared === HTTP2_PREFACE.length ? 'h2' : undefined;
}

/** Where a connection goes once its protocol is known. */
export interface FirstBytesRoutes {
  /** Takes a connection that began with the HTTP/2 preface, paused, the bytes read put back. */
  h2(socket: Socket): void;
  /** Takes any other, paused, the bytes read put back; it resumes the connection itself. */
  http1(socket: Socket): void;
}

/** Sockets waiting for their first bytes: a closing server closes those that sent nothing. */
export type Undecided = Set<Socket>;

/**
 * Reads `socket`'s first bytes and hands it to the server of the protocol
 * they begin. A connection that sends nothing, or a prefix of the preface
 * that never becomes it, within `timeoutMs` is closed: no request has
 * begun on it that could be answered. `undecided` holds it meanwhile.
 */
export function routeByFirstBytes(
  socket: Socket,
  routes: FirstBytesRoutes,
  timeoutMs: number,
  undecided: Undecided,
): void {
  let read: Buffer | undefined;
  const stop = () => {
    clearTimeout(timer);
    undecided.delete(socket);
    socket.off('data', onData);
    socket.off('end', drop);
    socket.off('close', drop);
    socket.off('error', drop);
  };
  function drop(): void {
    stop();
    socket.destroy();
  }
  function onData(chunk: Buffer): void {
    read = read === undefined ? chunk : Buffer.concat([read, chunk]);
    const protocol = protocolOfFirstBytes(read);
    if (protocol === undefined) return;
    stop();
    socket.pause();
    socket.unshift(read);
    if (protocol === 'h2') routes.h2(socket);
    else routes.http1(socket);
  }
  undecided.add(socket);
  const timer = setTimeout(() => {
    // Checked after this turn's reads: a process held up past the bound
    // reads what came meanwhile before it judges that nothing came.
    setImmediate(() => {
      if (undecided.has(socket)) drop();
    });
  }, timeoutMs);
  timer.unref();
  socket.on('data', onData);
  socket.on('end', drop);
  socket.on('close', drop);
  // A peer that resets the connection before it said anything is its own business.
  socket.on('error', drop);
}
