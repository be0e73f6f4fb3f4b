/**
 * @module gateway/upstream/grpc/web-text
 * The body of a `application/grpc-web-text` call, base64, decoded as it
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
