/**
 * @module gateway/upstream/upload
 * The request body on its way to a remote upstream: how much of it a route
 * that retries keeps to send again (Envoy's buffer limit; past it the body
 * streams and its request is not retried, Envoy's
 * `retry_or_shadow_abandoned`), and the watch for its end, from which the
 * timers of the answer count, and, with `idle_timeout_ms`, for its silence;
 * and its socket, kept on the request once undici lets go of the body.
 */
import type { IncomingMessage } from 'node:http';
import { peekBody } from '../stages/auth-body';

/**
 * undici detaches the socket from a request body it is done with (so that
 * destroying the body cannot close the connection), but Koa reads the client
 * address and protocol from `req.socket`, and so may anything that runs after
 * the gateway (its access log, a host app): once the body is closed, the
 * socket goes back.
 */
export function keepSocket(req: IncomingMessage): void {
  const socket = req.socket;
  req.once('close', () => {
    if (req.socket === null) req.socket = socket;
  });
}

/** Envoy's default `per_connection_buffer_limit_bytes`: the largest body a retry sends again. */
export const DEFAULT_RETRY_BUFFER_BYTES = 1024 * 1024;

/**
 * Reads the body whole to send it again on a retry, as Envoy buffers it;
 * null when it is longer than `limit`: it then streams, from its first
 * byte, and is not retried, since what went out cannot be sent twice.
 */
export async function bodyForRetries(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  const peeked = await peekBody(req, limit);
  if (peeked.cut) return null;
  // What was put back is read out to the stream's end, from which the timers count.
  req.resume();
  return peeked.bytes;
}

/**
 * Watches an upload under way: `onEnd` once it ended; with `idleMs`,
 * `onStall` when nothing came for that long, after which the request stream
 * is destroyed (its reader, undici or the read of a body for retries, stops) and its
 * socket kept for the answer.
 */
export class UploadWatch {
  private readonly end: () => void;
  private stall: (() => void) | null = null;

  constructor(
    private readonly req: IncomingMessage,
    idleMs: number,
    onEnd: () => void,
    onStall: () => void,
  ) {
    this.end = () => {
      this.stop();
      onEnd();
    };
    req.once('end', this.end);
    if (idleMs === 0) return;
    this.stall = () => {
      onStall();
      // Over HTTP/1.1 a request destroyed with its socket closes the connection; an HTTP/2 stream stays.
      if (req.httpVersionMajor < 2) {
        keepSocket(req);
        (req as { socket: unknown }).socket = null;
      }
      req.destroy();
    };
    req.setTimeout(idleMs, this.stall);
  }

  /** Stops watching. */
  stop(): void {
    this.req.off('end', this.end);
    if (this.stall === null) return;
    this.req.off('timeout', this.stall);
    if (this.req.httpVersionMajor >= 2) this.req.setTimeout(0);
    else this.req.socket?.setTimeout(0);
    this.stall = null;
  }
}
