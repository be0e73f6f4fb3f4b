/**
 * @module http/request/body
 * Whether a request has a body, a body that failed (too long, malformed)
 * and the answer it gets, and reading JSON request bodies with a size limit
 * and clear errors.
 */
import type { Context } from 'koa';
import type { IncomingMessage } from 'node:http';
import type getRawBody from 'raw-body';
import { destroyKeepingSocket } from '../../platform';
import { HttpError } from '../../errors';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * raw-body, loaded by the first body read: it loads iconv-lite's every
 * encoding, a noticeable part of what a gateway loads before its first
 * answer, which most often reads no body.
 */
let readRawBody: typeof getRawBody | undefined;

/**
 * How deep a JSON body may nest by default. JSON.parse builds a deeply
 * nested value ten times slower than a flat one of the same size (a MiB of
 * `[[[...]]]` held the event loop 300 ms), and whatever walks it recursively
 * afterwards (a validator, JSON.stringify) runs out of stack.
 */
export const DEFAULT_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/** Whether `text` nests arrays and objects deeper than `max`, brackets inside strings aside. */
export function nestsDeeperThan(text: string, max: number): boolean {
  // Each level takes a bracket to open it and one to close it.
  if (text.length <= 2 * max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/**
 * Whether a request without a `Content-Length` sends a body of a length
 * not known beforehand: over HTTP/1.1 in chunks, over HTTP/2 in DATA frames
 * unless its HEADERS ended the stream.
 */
export function hasUnsizedBody(req: IncomingMessage): boolean {
  if (req.headers['content-length'] !== undefined) return false;
  if (req.httpVersionMajor !== 2) return req.headers['transfer-encoding'] !== undefined;
  return (req as IncomingMessage & { stream?: { endAfterHeaders?: boolean } }).stream?.endAfterHeaders === false;
}

/** Whether a request has a body at all: a length above 0, chunks, or HTTP/2 DATA frames. */
export function hasRequestBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return length !== undefined ? length !== '0' : hasUnsizedBody(req);
}

/** Where a request keeps why its body failed. */
const BODY_FAILURE = Symbol('body failure');
type FailingRequest = IncomingMessage & { [BODY_FAILURE]?: HttpError };

function ignore(): void {}

/**
 * Fails the request's body with `answer`: whoever reads it (a module's
 * readJson, a proxied upload, the auth stage) gets that error, and the
 * connection stays, so that the answer can still be sent on it. The first
 * failure stands.
 */
export function failRequestBody(req: IncomingMessage, answer: HttpError): void {
  const failing = req as FailingRequest;
  if (failing[BODY_FAILURE] !== undefined) return;
  failing[BODY_FAILURE] = answer;
  req.on('error', ignore);
  // A failed body keeps its socket, and with it the chance to answer.
  destroyKeepingSocket(req);
  req.destroy(answer);
}

/** The answer owed for a request whose body failed (413, 400), if it did. */
export function bodyFailure(req: IncomingMessage): HttpError | undefined {
  return (req as FailingRequest)[BODY_FAILURE];
}

/**
 * Reads and parses a JSON body: 400 when there is none, 415 for another
 * Content-Type, a charset other than UTF-8 or a Content-Encoding, 413 over
 * `limit` bytes, 400 for a body that is not JSON or nests deeper than
 * `maxDepth` arrays and objects.
 */
export async function readJson(
  ctx: Context,
  limit = DEFAULT_BODY_LIMIT,
  maxDepth = DEFAULT_JSON_DEPTH,
): Promise<unknown> {
  // type-is answers null when the request has no body at all.
  const type = ctx.is('application/json', '+json');
  if (type === null || ctx.request.length === 0) throw HttpError.of('BODY_REQUIRED');
  if (!type) throw HttpError.of('BODY_NOT_JSON');
  // JSON between systems is UTF-8 (RFC 8259 §8.1), and it is read as UTF-8:
  // a body in another charset would be read wrongly without a word.
  const charset = ctx.request.charset.toLowerCase();
  if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
    throw HttpError.of('BODY_CHARSET_UNSUPPORTED', { charset });
  }
  const encoding = ctx.get('content-encoding').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') {
    // Read as it is, a compressed body would be taken for bad JSON, or worse.
    throw HttpError.of('BODY_ENCODING_UNSUPPORTED', { encoding });
  }
  let text: string;
  try {
    readRawBody ??= require('raw-body') as typeof getRawBody;
    text = await readRawBody(ctx.req, { limit, length: ctx.get('content-length') || undefined, encoding: 'utf8' });
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 413) throw HttpError.of('BODY_TOO_LARGE', { limit });
    // Why the body failed, when the server said (a malformed chunk, a body too slow to come).
    if (err instanceof HttpError) throw err;
    throw HttpError.of('BODY_UNREADABLE');
  }
  if (nestsDeeperThan(text, maxDepth)) throw HttpError.of('BODY_TOO_DEEP', { maxDepth });
  try {
    return JSON.parse(text);
  } catch {
    throw HttpError.of('BODY_INVALID_JSON');
  }
}
