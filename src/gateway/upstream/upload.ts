/**
 * @module gateway/upstream/upload
 * The request body on its way to a remote upstream. A route that retries
 * keeps it so that a retry can send it again, as Envoy buffers it: a body up
 * to a bound is read whole before the first try; a longer one is streamed to
 * the upstream as any other, and its request is not retried (Envoy's
 * `retry_or_shadow_abandoned`), since what went out cannot be sent twice.
 * And its end is watched for: the timers of the answer count from there, and
 * with `idle_timeout_ms`, an upload silent that long is given up.
 */
import type { IncomingMessage } from 'node:http';
import { keepSocket } from '../proxy';

/** Envoy's default `per_connection_buffer_limit_bytes`: the largest body a retry sends again. */
export const DEFAULT_RETRY_BUFFER_BYTES = 1024 * 1024;

/**
 * Reads the body of `req` whole when it is at most `limit` bytes: resolves
 * with it. Resolves with null, leaving `req` as it was (what was read put back
 * in front, the stream paused) for a body past the limit. Rejects when the
 * body fails (the client left; the body limit's 413).
 */
export function readReplayable(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      if (size <= limit) return;
      req.pause();
      done();
      req.unshift(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
      resolve(null);
    };
    const onEnd = (): void => {
      done();
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onError = (err: Error): void => {
      done();
      reject(err);
    };
    const onClose = (): void => {
      done();
      reject(Object.assign(new Error('the client closed the request before its body ended'), { code: 'ECONNRESET' }));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * Watches an upload under way: `onEnd` once it ended; with `idleMs`,
 * `onStall` when nothing came for that long, after which the request stream
 * is destroyed (its reader, undici or {@link readReplayable}, stops) and its
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
      keepSocket(req);
      (req as { socket: unknown }).socket = null;
      req.destroy();
    };
    req.setTimeout(idleMs, this.stall);
  }

  /** Stops watching. */
  stop(): void {
    this.req.off('end', this.end);
    if (this.stall === null) return;
    this.req.off('timeout', this.stall);
    this.req.socket?.setTimeout(0);
    this.stall = null;
  }
}
