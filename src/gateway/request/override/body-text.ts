/**
 * @module gateway/request/override/body-text
 * The text a backend reads a request body as, for ./body-override to look
 * for a method override in: its `Content-Encoding` undone (Express's
 * body-parser inflates gzip, deflate and br bodies by default), and its
 * `charset` read (body-parser decodes a JSON body in UTF-16 or UTF-32), as
 * well as the bytes read as UTF-8. An override the gateway could not read
 * in a body its backend decodes would route the request apart from what
 * the backend acts on.
 */
import zlib from 'node:zlib';
import { HttpError } from '../../../http';

/** Undoes one content coding, giving at most `maxBytes`; undefined for a coding no backend is known to undo. */
function undo(body: Buffer, coding: string, maxBytes: number): Buffer | undefined {
  const options = { maxOutputLength: maxBytes };
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.gunzipSync(body, options);
    case 'deflate':
      // A deflate body with or without its zlib wrapper, as browsers and body-parser take both.
      return zlib.inflateSync(body, { ...options, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    case 'br':
      return zlib.brotliDecompressSync(body, options);
    default:
      return undefined;
  }
}

/**
 * `body` with its content codings undone, last first; as it is when it has
 * none, or one no backend undoes, or bytes that do not decode (a backend
 * refuses those). Throws a 413 when the decoded body is longer than
 * `maxBytes`: what lies past the limit could not be read for an override.
 */
export function decodedBody(body: Buffer, contentEncoding: string | string[] | undefined, maxBytes: number): Buffer {
  if (contentEncoding === undefined) return body;
  const codings = (Array.isArray(contentEncoding) ? contentEncoding.join(',') : contentEncoding)
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  let decoded = body;
  for (let i = codings.length - 1; i >= 0; i--) {
    try {
      const next = undo(decoded, codings[i], maxBytes);
      if (next === undefined) return body;
      decoded = next;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        throw HttpError.of('BODY_DECODED_TOO_LARGE', { limit: maxBytes });
      }
      return body;
    }
  }
  return decoded;
}

/** UTF-32 as body-parser's iconv-lite reads it: little- or big-endian, by the label or the byte order mark. */
function utf32(body: Buffer, label: string): string {
  let bigEndian = label !== 'utf-32le' && label !== 'utf32le';
  let start = 0;
  if (label === 'utf-32' || label === 'utf32') {
    if (body.length >= 4 && body.readUInt32LE(0) === 0xfeff) {
      bigEndian = false;
      start = 4;
    } else if (body.length >= 4 && body.readUInt32BE(0) === 0xfeff) {
      start = 4;
    }
  }
  let text = '';
  for (let i = start; i + 4 <= body.length; i += 4) {
    const point = bigEndian ? body.readUInt32BE(i) : body.readUInt32LE(i);
    text += point <= 0x10ffff && (point < 0xd800 || point > 0xdfff) ? String.fromCodePoint(point) : '\uFFFD';
  }
  return text;
}

/** The `charset` parameter of a Content-Type, lower case. */
function charsetOf(contentType: string | undefined): string | undefined {
  return /;\s*charset\s*=\s*"?([^";,\s]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
}

/**
 * The texts a backend may read `body` as: UTF-8, and in the charset its
 * Content-Type names when that is another one a decoder knows.
 */
export function bodyTexts(body: Buffer, contentType: string | undefined): string[] {
  const texts = [body.toString('utf8')];
  const charset = charsetOf(contentType);
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') return texts;
  if (charset.startsWith('utf-32') || charset.startsWith('utf32')) {
    texts.push(utf32(body, charset));
    return texts;
  }
  try {
    texts.push(new TextDecoder(charset).decode(body));
  } catch {
    // A charset no decoder knows: backends refuse the body (415).
  }
  return texts;
}
