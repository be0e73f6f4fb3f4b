/**
 * @module ratelimit/grpc/port/connections
 * The gRPC port's own listener. grpc-js's `bindAsync` takes every TCP
 * connection and waits for its HTTP/2 preface forever, without a cap on how
 * many: a socket that never sends a byte stays open as long as its peer
 * keeps it. This
 * listener accepts connections itself, up to a cap, reads the client's
 * connection preface and first SETTINGS frame within a time bound, and only
 * then hands the socket to grpc-js (`Server.createConnectionInjector`), as
 * Go's gRPC server (envoyproxy/ratelimit's) closes a connection whose
 * preface does not come within its connection timeout.
 */
import * as net from 'node:net';
import type * as grpc from '@grpc/grpc-js';
import { grpcJs } from '../../../platform';
import { bindPort, type BoundPort } from '../../../ports';

/** The 24 bytes every HTTP/2 client sends first (RFC 9113, section 3.4). */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME_HEADER_BYTES = 9;
const SETTINGS_FRAME = 0x4;
/** SETTINGS_MAX_FRAME_SIZE's initial value: a longer first frame is the HTTP/2 layer's to refuse, not ours to buffer. */
const MAX_FIRST_FRAME_BYTES = 16_384;

export interface ConnectionLimits {
  /** Most connections open at once, mid-handshake or serving; one more is closed as it comes. */
  readonly maxConnections: number;
  /** How long a connection may take to send its preface and first SETTINGS frame, in ms. */
  readonly handshakeTimeoutMs: number;
}

export interface GrpcListener {
  /** The port listened on. */
  readonly port: number;
  /** Connections open now (handshaking or handed to grpc-js). */
  readonly connections: number;
  /**
   * Stops accepting and closes connections still in their handshake; those
   * handed over are grpc-js's to close (`tryShutdown`, `forceShutdown`).
   */
  close(): void;
}

/**
 * How many bytes of `bytes` (what a connection sent so far) the handshake
 * still needs: 0 once the preface and a whole first frame are in, or as soon
 * as the bytes cannot be one (not the preface, a first frame that is no
 * SETTINGS or is too long), which the HTTP/2 layer then refuses with a
 * GOAWAY as it would have.
 */
export function handshakeBytesMissing(bytes: Buffer): number {
  const prefix = Math.min(bytes.length, PREFACE.length);
  if (bytes.compare(PREFACE, 0, prefix, 0, prefix) !== 0) return 0;
  const frameAt = PREFACE.length;
  if (bytes.length < frameAt + FRAME_HEADER_BYTES) return frameAt + FRAME_HEADER_BYTES - bytes.length;
  const length = bytes.readUIntBE(frameAt, 3);
  if (bytes[frameAt + 3] !== SETTINGS_FRAME || length > MAX_FIRST_FRAME_BYTES) return 0;
  return Math.max(0, frameAt + FRAME_HEADER_BYTES + length - bytes.length);
}

/**
 * Listens on `host:port` for `server`, plaintext, within `limits`; on
 * `bound` instead when it is given: a port bound before the server was made.
 */
export function listenForGrpc(
  server: grpc.Server,
  host: string,
  port: number,
  limits: ConnectionLimits,
  bound?: BoundPort,
): Promise<GrpcListener> {
  const injector = server.createConnectionInjector(grpcJs().ServerCredentials.createInsecure());
  const handshaking = new Set<net.Socket>();
  let open = 0;

  const accept = (socket: net.Socket) => {
    if (open >= limits.maxConnections) {
      // Closed unread: a client over the cap sees a reset and connects again
      // later, or to another instance, rather than waiting in a queue.
      socket.resetAndDestroy();
      return;
    }
    open++;
    socket.once('close', () => open--);
    // A reset by the peer mid-handshake is its own business; without a
    // listener it would be an uncaught error.
    socket.on('error', () => {});
    handshaking.add(socket);
    const chunks: Buffer[] = [];
    let received = 0;

    const handOver = () => {
      clearTimeout(timer);
      socket.off('data', onData);
      handshaking.delete(socket);
      socket.pause();
      // Node's HTTP/2 session reads what is left in the socket's buffer
      // before it takes the socket over, so the bytes read here are not lost.
      if (received > 0) socket.unshift(Buffer.concat(chunks, received));
      injector.injectConnection(socket);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (handshakeBytesMissing(chunks.length === 1 ? chunk : Buffer.concat(chunks, received)) === 0) handOver();
    };
    socket.on('data', onData);
    socket.once('close', () => {
      clearTimeout(timer);
      handshaking.delete(socket);
    });
    const timer = setTimeout(() => {
      // Checked after this turn's reads (setImmediate runs after the poll
      // phase): a process held up past the bound has its sockets' bytes read
      // before it judges that they never came.
      setImmediate(() => {
        if (handshaking.has(socket)) socket.destroy();
      });
    }, limits.handshakeTimeoutMs);
    timer.unref();
  };

  const listeners: net.Server[] = [];
  const close = () => {
    // Not waited for: net.Server's close waits for every connection, the
    // served ones too, which grpc-js's shutdown ends.
    for (const listener of listeners) listener.close();
    for (const socket of handshaking) socket.destroy();
    handshaking.clear();
  };

  // Every address the name resolves to, on one port, as grpc-js's bindAsync
  // listens (`localhost`: 127.0.0.1 and ::1), and as it, failing only if
  // none can be listened on (a machine without IPv6).
  const binding = bound ? Promise.resolve(bound) : bindPort(host, port, { everyAddress: true });
  return binding.then(async (ports) => {
    for (const one of ports.listeners) {
      const listener = net.createServer(accept);
      await one.handTo(listener);
      listeners.push(listener);
    }
    return {
      port: ports.port,
      get connections() {
        return open;
      },
      close,
    };
  });
}
