/**
 * @module gateway/stages/answer-headers
 * Headers a stage's service asks to add to the response the client gets
 * (an ext_authz answer's `response_headers_to_add`, a rate-limit answer's
 * `response_headers_to_add`): kept on the request's state when the service
 * lets it on, and applied to whatever answers it, the upstream or the
 * gateway itself, once that answer is in, as Envoy applies them.
 */
import type { Context } from 'koa';
import { FRAMING_HEADERS, headerName } from '../../http';

/** One header to add to the response: `append` adds a line of the same name, else it replaces those there. */
export interface AnswerHeader {
  readonly name: string;
  readonly value: string;
  readonly append: boolean;
}

/** State key of the headers kept for the response. */
export const ANSWER_HEADERS_STATE = 'gatehouseAnswerHeaders';

/** Keeps `headers` for the response; nothing is allocated when there are none. */
export function keepAnswerHeaders(ctx: Context, headers: readonly AnswerHeader[]): void {
  if (headers.length === 0) return;
  const kept = ctx.state[ANSWER_HEADERS_STATE] as AnswerHeader[] | undefined;
  if (kept === undefined) ctx.state[ANSWER_HEADERS_STATE] = headers.slice();
  else kept.push(...headers);
}

/**
 * Applies the headers kept for the response, if any, unless it is already
 * sent. Never its framing or its connection, which are the gateway's: a
 * wrong one would cut the answer or the next request on the connection.
 */
export function applyAnswerHeaders(ctx: Context): void {
  const kept = ctx.state[ANSWER_HEADERS_STATE] as AnswerHeader[] | undefined;
  if (kept === undefined) return;
  const res = ctx.res;
  if (res.headersSent) return;
  for (let i = 0; i < kept.length; i++) {
    const { name, value, append } = kept[i];
    const lower = name.toLowerCase();
    if (FRAMING_HEADERS.has(lower) || lower.charCodeAt(0) === 58) continue;
    const spelled = headerName(lower);
    const prior = append ? res.getHeader(lower) : undefined;
    if (prior === undefined) res.setHeader(spelled, value);
    else res.setHeader(spelled, Array.isArray(prior) ? [...prior, value] : [String(prior), value]);
  }
}
