/**
 * @module gateway/stages/auth-body
 * The request body an AuthService's `include_body` sends to the auth service:
 * read up to a limit and then put back, so that the backend still reads the
 * whole body from its first byte.
 */
import type { IncomingMessage } from 'node:http';
import { bodyFailure, HttpError } from '../../http';

/** What {@link peekBody} read. */
export interface PeekedBody {
  /** At most `max` bytes from the start of the body. */
  readonly bytes: Buffer;
  /** Whether the body is longer than `max` (then `bytes` is its beginning). */
  readonly cut: boolean;
}

const NOTHING = Buffer.alloc(0);

/**
 * Reads the first `max` bytes of `req`'s body (all of it when shorter) and
 * puts what it read back at the head of the stream, before its end is
 * announced: whoever reads `req` next (a proxy, a module's body parser) sees
 * the body as the client sent it. Stops reading once past `max`, so that a
 * long body is not held in memory. Rejects with the stream's error when it
 * fails (the gateway's 413 for a chunked body over its limit) and with a 400
 * when the client goes away.
 */
export function peekBody(req: IncomingMessage, max: number): Promise<PeekedBody> {
  // A body can fail before anyone reads it (a malformed chunk in the first
  // packet): its error and close are gone, and would never come again.
  const failed = bodyFailure(req);
  if (failed !== undefined) return Promise.reject(failed);
  if (req.destroyed && !req.complete)
    return Promise.reject(HttpError.of('BODY_UNREADABLE', { cause: new Error('the body was cut short') }));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      req.off('readable', onReadable);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const finish = (): void => {
      cleanup();
      const all = chunks.length === 0 ? NOTHING : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
      // Put back before 'end' is emitted: a stream that holds data again does not end until it is read.
      if (size > 0) req.unshift(all);
      resolve({ bytes: size > max ? all.subarray(0, max) : all, cut: size > max });
    };
    function onReadable(): void {
      let chunk: Buffer | null;
      while ((chunk = req.read() as Buffer | null) !== null) {
        chunks.push(chunk);
        size += chunk.length;
        if (size > max) return finish();
      }
      // The parser has the whole message and it is all read: done, before 'end' goes out.
      if (req.complete && req.readableLength === 0) finish();
    }
    function onEnd(): void {
      finish();
    }
    function onError(err: unknown): void {
      cleanup();
      reject(err instanceof HttpError ? err : HttpError.of('BODY_UNREADABLE', { cause: err }));
    }
    function onClose(): void {
      if (!req.complete) onError(new Error('the client closed the connection before the end of its body'));
    }
    req.on('readable', onReadable);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
