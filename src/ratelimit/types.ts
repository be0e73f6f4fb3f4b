/**
 * @module ratelimit/types
 * The typed, in-process face of the rate-limit service: envoy's
 * `ShouldRateLimit` messages in camelCase. The gRPC adapters translate.
 */

export type RateLimitUnit = 'SECOND' | 'MINUTE' | 'HOUR' | 'DAY' | 'WEEK' | 'MONTH' | 'YEAR';
export type RateLimitCode = 'OK' | 'OVER_LIMIT';

export interface DescriptorEntry {
  key: string;
  value: string;
}

export interface RateLimitDescriptor {
  entries: DescriptorEntry[];
  /** A limit given in the request, overriding the configured one (envoy v3). */
  limit?: { requestsPerUnit: number; unit: RateLimitUnit };
  /** Hits this descriptor adds; the request's `hitsAddend` (default 1) otherwise. */
  hitsAddend?: number;
}

export interface RateLimitRequest {
  domain: string;
  descriptors: RateLimitDescriptor[];
  hitsAddend?: number;
}

export interface CurrentLimit {
  name?: string;
  requestsPerUnit: number;
  unit: RateLimitUnit;
}

export interface DescriptorStatus {
  code: RateLimitCode;
  /** Absent when no rule matched the descriptor. */
  currentLimit?: CurrentLimit;
  limitRemaining: number;
  /** Milliseconds until the current window ends. */
  durationUntilResetMs?: number;
}

export interface RateLimitResponse {
  overallCode: RateLimitCode;
  statuses: DescriptorStatus[];
  responseHeadersToAdd?: DescriptorEntry[];
}

/** Anything that can decide on a rate-limit request. */
export interface RateLimiter {
  shouldRateLimit(request: RateLimitRequest): Promise<RateLimitResponse>;
  /**
   * The same decision, given at once when it needs no waiting (a store that
   * decides synchronously, as the memory store does), else as a promise.
   * Throws or rejects as `shouldRateLimit` rejects. Optional: an in-process
   * caller uses it to skip the promise of every request.
   */
  decide?(request: RateLimitRequest): RateLimitResponse | Promise<RateLimitResponse>;
}
