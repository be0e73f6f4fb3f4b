/**
 * @module gateway/stages/auth-refusal
 * An auth service's refusal written as the client's response: its own status,
 * headers and body, or the gateway's error body when it gave none (or, in
 * this process, said why).
 */
import type { Context } from 'koa';
import type { AuthDecision } from '../../auth';
import { HttpError } from '../../http';
import type { ChildSpan } from '../../tracing';
import { closeAuthSpan } from './auth-span';
import { BODY_HEADERS, setAnswerHeader, single } from './auth-headers';
import type { AuthStageOptions } from './stage';

const EMPTY = Buffer.alloc(0);

/** What a refusal is written with. */
export interface RefusalOptions {
  /** The headers of the auth service's answer that the client gets. */
  readonly returned: readonly string[];
  /** Whether the auth service is a module of this process (its detail and error codes are the client's to see). */
  readonly inProcess: boolean;
  readonly events: AuthStageOptions;
}

/** Writes the auth service's refusal as the client's response; false, for the request goes no further. */
export type Refuse = (ctx: Context, decision: AuthDecision, span: ChildSpan | null, immediate: boolean) => false;

/** The refusal writer of one auth stage. */
export function refusalWriter({ returned, inProcess, events }: RefusalOptions): Refuse {
  return function refuse(ctx, decision, span, immediate) {
    events.authDecision?.('denied');
    if (span !== null) closeAuthSpan(span, 'denied', decision.status, inProcess ? immediate : undefined);
    const body = decision.body;
    // No body to pass on, or an in-process service that says why: the
    // gateway's own error body, in the representation the client's Accept chose.
    if (
      decision.status >= 400 &&
      (body === undefined || body.length === 0 || (inProcess && decision.detail !== undefined))
    ) {
      const headers: Record<string, string> = {};
      let lists = false;
      for (const name of returned) {
        const value = decision.headers[name];
        if (value === undefined || BODY_HEADERS.includes(name)) continue;
        if (typeof value !== 'string' && value.length > 1) lists = true;
        headers[name] = single(value);
      }
      if (!lists) {
        if (inProcess && decision.error !== undefined) throw HttpError.of(decision.error, { headers });
        // The auth service's own status, relayed: with its detail when it is in this process.
        throw new HttpError(decision.status, inProcess ? decision.detail : undefined, { headers });
      }
      // Two Set-Cookie joined, as an error's headers are, are one broken cookie (RFC 6265 §3):
      // set as they came, and the gateway writes the error body of a status without one.
      ctx.status = decision.status;
      for (const name in headers) setAnswerHeader(ctx, name, decision.headers[name]);
      return false;
    }
    ctx.status = decision.status;
    for (const name of returned) {
      const value = decision.headers[name];
      if (value !== undefined) setAnswerHeader(ctx, name, value);
    }
    ctx.body = body === undefined ? EMPTY : typeof body === 'string' ? Buffer.from(body) : body;
    // Koa calls bytes `application/octet-stream`; an answer that named no type (a redirect) keeps none.
    if (decision.headers['content-type'] === undefined) ctx.remove('Content-Type');
    return false;
  };
}
