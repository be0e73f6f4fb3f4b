/**
 * @module ratelimit/response
 * The answer to a request once the store has decided its counted
 * descriptors: each one's status, and the request's overall code.
 */
import type { LimitRule } from './limits/index';
import { quotaModeMetadata } from './grpc/messages/quota-metadata';
import { earlierHits, type StoreDecision, type WindowCheck } from './store';
import type { DescriptorStatus, RateLimitRequest, RateLimitResponse } from './types';

/**
 * The response to `request`: `statuses` (those of uncounted descriptors
 * already set) completed from the store's `decision` on `checks`, the check
 * at j being the descriptor at `owners[j]`. A refusal adds one to
 * `counts.overLimit`.
 */
export function respond(
  counts: { overLimit: number },
  request: RateLimitRequest,
  checks: readonly WindowCheck[],
  owners: readonly number[],
  rules: readonly (LimitRule | undefined)[],
  statuses: DescriptorStatus[],
  decision: StoreDecision,
  quotaMode: boolean,
): RateLimitResponse {
  let over = false;
  let violations: number[] | undefined;
  const earlier = earlierHits(checks);
  for (let j = 0; j < checks.length; j++) {
    const check = checks[j];
    const rule = rules[owners[j]]!;
    const before = decision.before[j];
    // What this descriptor saw: its counter plus the earlier hits of this request on it.
    const seen = before + (earlier?.[j] ?? 0);
    const exceeds = seen + check.hits > check.limit;
    // A quota is reported over, as envoyproxy/ratelimit reports it, without refusing the request.
    const code = exceeds && !rule.shadowMode ? 'OVER_LIMIT' : 'OK';
    if (code === 'OVER_LIMIT') {
      if (rule.quotaMode) (violations ??= []).push(owners[j]);
      else over = true;
    }
    const status: DescriptorStatus = {
      code,
      currentLimit: rule.currentLimit,
      // Refused, the request took nothing: what remains is what was there.
      limitRemaining: exceeds ? 0 : decision.admitted ? check.limit - seen - check.hits : check.limit - before,
      // Whole seconds, as envoyproxy/ratelimit counts them: its clock reads seconds, so the last
      // fraction of a window reads as 1 s (Envoy turns this into X-RateLimit-Reset, in seconds).
      durationUntilResetMs: Math.ceil(check.ttlMs / 1000) * 1000,
    };
    if (rule.shadowMode) status.shadow = true;
    statuses[owners[j]] = status;
  }
  if (over) counts.overLimit++;
  const response: RateLimitResponse = { overallCode: over ? 'OVER_LIMIT' : 'OK', statuses };
  if (quotaMode) response.dynamicMetadata = quotaModeMetadata(request, violations);
  return response;
}
