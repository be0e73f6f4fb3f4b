/**
 * @module http/body
 * Whether a request has a body, and reading JSON request bodies with a size
 * limit and clear errors.
 */
import type { Context } from 'koa';
import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import { HttpError } from './errors';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Whether a request has a body at all: a length above 0, or chunks. */
export function hasRequestBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
}

/**
 * Reads and parses a JSON body: 400 when there is none, 415 for another
 * Content-Type, a charset other than UTF-8 or a Content-Encoding, 413 over
 * `limit` bytes, 400 for a body that is not JSON.
 */
export async function readJson(ctx: Context, limit = DEFAULT_BODY_LIMIT): Promise<unknown> {
  // type-is answers null when the request has no body at all.
  const type = ctx.is('application/json', '+json');
  if (type === null || ctx.request.length === 0) throw new HttpError(400, 'a JSON request body is required');
  if (!type) throw new HttpError(415, 'the request body must be application/json');
  // JSON between systems is UTF-8 (RFC 8259 §8.1), and it is read as UTF-8:
  // a body in another charset would be read wrongly without a word.
  const charset = ctx.request.charset.toLowerCase();
  if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
    throw new HttpError(415, `charset '${charset}' is not supported: JSON is sent in UTF-8`);
  }
  const encoding = ctx.get('content-encoding').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') {
    // Read as it is, a compressed body would be taken for bad JSON, or worse.
    throw new HttpError(415, `content encoding '${encoding}' is not supported`);
  }
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit, length: ctx.get('content-length') || undefined, encoding: 'utf8' });
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 413) throw new HttpError(413, `the request body is larger than ${limit} bytes`);
    throw new HttpError(400, 'the request body could not be read');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'the request body is not valid JSON');
  }
}
