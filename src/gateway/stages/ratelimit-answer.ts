/**
 * @module gateway/stages/ratelimit-answer
 * What the rate-limit stage does with the service's answer: the request let
 * on with the RateLimit headers and what the service asks to add, or
 * refused with a 429.
 */
import type { Context } from 'koa';
import { FRAMING_HEADERS, headerName, HttpError } from '../../http';
import type { RateLimitResponse } from '../../ratelimit';
import { USER_HEADER } from '../../auth';
import type { GatewayEvents } from '../events';
import { keepAnswerHeaders, type AnswerHeader } from './answer-headers';
import { quotaViolations, rateLimitHeaders } from './ratelimit-headers';

/** State key under which the stage leaves the headers it set, for the gateway to keep. */
export const RATE_LIMIT_HEADERS_STATE = 'gatehouseRateLimitHeaders';

/**
 * State key under which the stage leaves the service's dynamic metadata of a
 * request it let through (for a quota-mode limit, a {@link QuotaModeMetadata}:
 * which descriptors are over their quota), for the middleware of an embedding
 * app to act on.
 */
export const RATE_LIMIT_METADATA_STATE = 'gatehouseRateLimitMetadata';

/** A header the service asks to add to the upstream's answer: one more line, as Envoy adds it. */
function toAnswerHeader(entry: { key: string; value: string }): AnswerHeader {
  return { name: entry.key, value: entry.value, append: true };
}

/**
 * The service's headers onto the request let through, added to those of
 * the same name; never Host, a pseudo-header, the framing or the user the
 * auth service named.
 */
function addRequestHeaders(ctx: Context, entries: readonly { key: string; value: string }[]): void {
  const headers = ctx.req.headers;
  for (const { key, value } of entries) {
    const name = key.toLowerCase();
    if (
      name === '' ||
      name.charCodeAt(0) === 58 ||
      name === 'host' ||
      name === USER_HEADER ||
      FRAMING_HEADERS.has(name)
    )
      continue;
    const prior = headers[name];
    headers[name] = prior === undefined ? value : `${Array.isArray(prior) ? prior.join(',') : prior},${value}`;
  }
}

/** The 429 with the service's own body, as Envoy sends it; its type is plain text unless the service names one. */
function overLimitBody(ctx: Context, headers: Record<string, string>, body: Buffer): false {
  ctx.status = 429;
  const res = ctx.res;
  for (const name in headers) res.setHeader(headerName(name), headers[name]);
  const typed = res.getHeader('content-type') !== undefined;
  ctx.body = body;
  if (!typed) ctx.type = 'text/plain; charset=utf-8';
  return false;
}

/** The stage's counts a settled answer adds to. */
export interface SettledCounts {
  overLimit: number;
  quotaExceeded: number;
}

/** How answers are settled: the stage's events, and whether Envoy's header is left off a 429. */
export interface SettleOptions extends Pick<GatewayEvents, 'rateLimitDecision'> {
  /** No `x-envoy-ratelimited` on a 429, as the Module's `suppress_envoy_headers` asks. */
  suppressEnvoyHeaders?: boolean;
}

/** Settles one request by the service's answer: true lets it on; a refusal is thrown, or written and false. */
export type Settle = (ctx: Context, response: RateLimitResponse) => boolean;

/** The settling of one stage's answers, counted in `stats`. */
export function answerSettler(options: SettleOptions, stats: SettledCounts): Settle {
  /**
   * Lets the request on with the RateLimit headers and what the service asks
   * to add, or refuses it with a 429: the service's `raw_body` when it gives
   * one, else the error body; `x-envoy-ratelimited: true` on it, as Envoy.
   */
  return function settle(ctx, response) {
    if (response.overallCode === 'OVER_LIMIT') {
      stats.overLimit++;
      options.rateLimitDecision?.('over_limit');
      const headers = rateLimitHeaders(response);
      if (!options.suppressEnvoyHeaders) headers['x-envoy-ratelimited'] = 'true';
      if (response.rawBody === undefined) throw HttpError.of('RATE_LIMITED', { headers });
      return overLimitBody(ctx, headers, response.rawBody);
    }
    options.rateLimitDecision?.('ok');
    const headers = rateLimitHeaders(response, false);
    // Straight on the response: ctx.set builds arrays for each header it sets.
    const res = ctx.res;
    if (!res.headersSent) for (const name in headers) res.setHeader(headerName(name), headers[name]);
    ctx.state[RATE_LIMIT_HEADERS_STATE] = headers;
    if (response.requestHeadersToAdd) addRequestHeaders(ctx, response.requestHeadersToAdd);
    if (response.responseHeadersToAdd) keepAnswerHeaders(ctx, response.responseHeadersToAdd.map(toAnswerHeader));
    if (response.dynamicMetadata) {
      ctx.state[RATE_LIMIT_METADATA_STATE] = response.dynamicMetadata;
      if (quotaViolations(response).length > 0) stats.quotaExceeded++;
    }
    return true;
  };
}
