/**
 * @module gateway/stages/ratelimit-headers
 * The headers the rate-limit stage sets from an answer: the IETF
 * `RateLimit` and `RateLimit-Policy` of the status that binds hardest,
 * `Retry-After` over the limit, and what the service asked to add.
 */
import { UNIT_SECONDS, type DescriptorStatus, type RateLimitResponse } from '../../ratelimit';

/** A structured-field string: quoted, printable ASCII only. */
function sfString(value: string): string {
  return `"${value.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '\\$&')}"`;
}

// Limit names come from the limits files, so there are few: each is quoted
// once, not on every answer. Bounded all the same.
const quotedNames = new Map<string, string>();
function quotedName(name: string): string {
  let quoted = quotedNames.get(name);
  if (quoted === undefined) {
    quoted = sfString(name);
    if (quotedNames.size < 1024) quotedNames.set(name, quoted);
  }
  return quoted;
}

const NO_INDEXES: readonly number[] = [];

/**
 * The status that binds hardest: over the limit with the longest wait, else
 * the least remaining. A limit in shadow mode binds nothing, and is not
 * weighed; nor are statuses at the indexes of `skip`, nor
 * any status over its limit when `admitted` (a quota exceeded by a request
 * let through binds nothing).
 */
export function mostRestrictive(
  statuses: readonly DescriptorStatus[],
  skip: readonly number[] = NO_INDEXES,
  admitted = false,
): DescriptorStatus | undefined {
  let best: DescriptorStatus | undefined;
  for (let i = 0; i < statuses.length; i++) {
    const s = statuses[i];
    if (!s.currentLimit || s.shadow || (admitted && s.code === 'OVER_LIMIT') || skip.includes(i)) continue;
    if (!best) {
      best = s;
      continue;
    }
    const over = s.code === 'OVER_LIMIT';
    const bestOver = best.code === 'OVER_LIMIT';
    if (over !== bestOver) {
      if (over) best = s;
      continue;
    }
    const reset = s.durationUntilResetMs ?? 0;
    const bestReset = best.durationUntilResetMs ?? 0;
    if (
      over
        ? reset > bestReset
        : s.limitRemaining < best.limitRemaining || (s.limitRemaining === best.limitRemaining && reset > bestReset)
    ) {
      best = s;
    }
  }
  return best;
}

/** The indexes of the descriptors over a quota-mode limit, from the dynamic metadata. */
export function quotaViolations(response: RateLimitResponse): readonly number[] {
  const violations = response.dynamicMetadata?.quotaModeViolations;
  return Array.isArray(violations) ? (violations as number[]) : NO_INDEXES;
}

/**
 * The status the headers describe. A quota exceeded refuses nothing, so it
 * is left out, unless quotas alone refused the request (envoyproxy/ratelimit
 * refuses once every quota of a request is exceeded).
 */
function bindingStatus(response: RateLimitResponse): DescriptorStatus | undefined {
  const admitted = response.overallCode !== 'OVER_LIMIT';
  const status = mostRestrictive(response.statuses, quotaViolations(response), admitted);
  if (admitted || status?.code === 'OVER_LIMIT') return status;
  return mostRestrictive(response.statuses);
}

/**
 * `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers,
 * structured fields) for the most restrictive status, and `Retry-After`
 * when it is over the limit, after the headers the service asked to add
 * (unless `withServiceHeaders` is false). Empty when no status carries a
 * limit and the service asks for none.
 */
export function rateLimitHeaders(response: RateLimitResponse, withServiceHeaders = true): Record<string, string> {
  const status = bindingStatus(response);
  const headers: Record<string, string> = {};
  if (withServiceHeaders && response.responseHeadersToAdd)
    for (const h of response.responseHeadersToAdd) headers[h.key] = h.value;
  if (!status?.currentLimit) return headers;
  const limit = status.currentLimit;
  const window = UNIT_SECONDS[limit.unit];
  const reset =
    status.durationUntilResetMs === undefined ? window : Math.max(1, Math.ceil(status.durationUntilResetMs / 1000));
  const name = quotedName(limit.name ?? 'default');
  headers['RateLimit-Policy'] = `${name};q=${limit.requestsPerUnit};w=${window}`;
  headers.RateLimit = `${name};r=${status.limitRemaining};t=${reset}`;
  if (status.code === 'OVER_LIMIT') headers['Retry-After'] = String(reset);
  return headers;
}
