/**
 * @module gateway/upstream/grpc/web-text
 * gRPC-Web's text form, base64 both ways. The answer to a call that asks
 * for it is encoded frame by frame (see {@link GrpcWebTextEncoder}). The
 * body of a `application/grpc-web-text` call is decoded as it
 * streams: whole quartets are decoded as they come (a chunk may end inside
 * one, and the rest waits for the next), each padded quartet ending a
 * segment, as a client that encodes each message on its own sends them.
 * Anything that is not base64, or a body that ends inside a quartet, fails
 * the stream with a 400 (`GRPC_WEB_TEXT_INVALID`), as Envoy refuses it.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { HttpError } from '../../../http';

/** Whole quartets, padding only at the end of a quartet (`xx==`, `xxx=`). */
const QUARTETS = /^(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)*$/;

/** Decodes base64 text into the bytes it stands for, a quartet at a time. */
export class GrpcWebTextDecoder extends Transform {
  private rest = '';

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const text = this.rest + chunk.toString('latin1');
    const whole = text.length - (text.length % 4);
    this.rest = text.slice(whole);
    if (whole === 0) return done();
    const quartets = text.slice(0, whole);
    if (!QUARTETS.test(quartets)) return done(HttpError.of('GRPC_WEB_TEXT_INVALID'));
    done(null, decode(quartets));
  }

  override _flush(done: TransformCallback): void {
    done(this.rest === '' ? null : HttpError.of('GRPC_WEB_TEXT_INVALID'));
  }
}

/** The bytes of whole quartets, where a padded quartet may come before others. */
function decode(quartets: string): Buffer {
  if (!quartets.includes('=')) return Buffer.from(quartets, 'base64');
  const parts: Buffer[] = [];
  let start = 0;
  for (let at = 0; at < quartets.length; at += 4) {
    if (quartets.charCodeAt(at + 3) !== 61 /* = */) continue;
    parts.push(Buffer.from(quartets.slice(start, at + 4), 'base64'));
    start = at + 4;
  }
  if (start < quartets.length) parts.push(Buffer.from(quartets.slice(start), 'base64'));
  return Buffer.concat(parts);
}

/** The bytes of a gRPC frame's head: its flag and its 4-byte length. */
const FRAME_HEAD = 5;

/**
 * Encodes the upstream's answer to base64 frame by frame, as Envoy's
 * grpc_web filter does: each gRPC frame is a base64 unit of its own (its
 * own padding), so that a client decoding what has come so far gets each
 * message whole. A frame is not held until it is whole: its bytes go in
 * runs of whole triplets, which read as the one unit, and at most the
 * bytes of one incomplete triplet or frame head wait for the next chunk.
 */
export class GrpcWebTextEncoder {
  /** Bytes held back: the start of a frame head (at a frame's start), else under three of the frame under way. */
  private held: Buffer | null = null;
  /** Bytes of the frame under way still to come after those held; 0 at a frame's start. */
  private left = 0;

  /** The base64 of `chunk`'s frames that can be written now. */
  encode(chunk: Buffer): string {
    const held = this.held;
    const data = held === null ? chunk : Buffer.concat([held, chunk]);
    this.held = null;
    // Held bytes of a frame under way are counted in `left` already; the start of a frame head is not.
    let at = 0;
    let scanned = held !== null && this.left > 0 ? held.length : 0;
    let out = '';
    while (scanned < data.length) {
      if (this.left === 0) {
        if (data.length - scanned < FRAME_HEAD) break;
        this.left = FRAME_HEAD + data.readUInt32BE(scanned + 1);
      }
      const taken = Math.min(this.left, data.length - scanned);
      scanned += taken;
      this.left -= taken;
      if (this.left === 0) {
        out += data.toString('base64', at, scanned);
        at = scanned;
      }
    }
    if (this.left > 0) {
      // The frame under way: its whole triplets now, the rest with the bytes that follow it.
      const whole = at + Math.floor((data.length - at) / 3) * 3;
      if (whole > at) out += data.toString('base64', at, whole);
      at = whole;
    }
    // A copy: a few bytes, which would otherwise keep the whole chunk.
    if (at < data.length) this.held = Buffer.from(data.subarray(at));
    return out;
  }

  /** What is held back, padded: the end of an answer cut inside a frame. */
  flush(): string {
    const held = this.held;
    this.held = null;
    this.left = 0;
    return held === null ? '' : held.toString('base64');
  }
}
