/**
 * @module http/body
 * Reading JSON request bodies with a size limit and clear errors.
 */
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { HttpError } from './errors';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * Reads and parses a JSON body: 415 for another Content-Type, 413 over
 * `limit` bytes, 400 for a body that is not JSON.
 */
export async function readJson(ctx: Context, limit = DEFAULT_BODY_LIMIT): Promise<unknown> {
  if (!ctx.is('application/json', '+json')) {
    throw new HttpError(415, 'the request body must be application/json');
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
