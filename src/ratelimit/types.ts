/**
 * @module ratelimit/types
 * The typed, in-process face of the rate-limit service: envoy's
 * `ShouldRateLimit` messages in camelCase. The gRPC adapters translate.
 */
import type { DecideOptions } from './store';
import type { RequestBounds } from './bounds';

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
  /**
   * Set by the in-process service on the status of a limit in shadow mode,
   * which refuses nothing: no face the gateway gives clients describes it.
   * Not sent over gRPC, whose answer has no such field.
   */
  shadow?: true;
}

/** A value of `dynamic_metadata` (a `google.protobuf.Struct`), as plain JSON. */
export type MetadataValue = null | boolean | number | string | MetadataValue[] | { [key: string]: MetadataValue };

/**
 * The dynamic metadata envoyproxy/ratelimit sends for quota mode: the domain,
 * each descriptor's entries as `key=value`, the request's `hits_addend` when
 * it gave one, and the indexes of the descriptors over their quota.
 */
export interface QuotaModeMetadata {
  [key: string]: MetadataValue | undefined;
  domain: string;
  descriptors: { entries: string[]; hitsAddend?: number }[];
  hitsAddend?: number;
  quotaModeEnabled: boolean;
  /** Absent when no quota is exceeded. */
  quotaModeViolations?: number[];
}

export interface RateLimitResponse {
  overallCode: RateLimitCode;
  statuses: DescriptorStatus[];
  responseHeadersToAdd?: DescriptorEntry[];
  /** envoy v3: headers the upstream is to get with a request let through. */
  requestHeadersToAdd?: DescriptorEntry[];
  /** envoy v3: the body of the 429 a request over the limit is answered with. */
  rawBody?: Buffer;
  /**
   * envoy v3's `dynamic_metadata`: what a gateway may act on besides the
   * answer. This service sends it when a descriptor matched a quota-mode
   * limit ({@link QuotaModeMetadata}).
   */
  dynamicMetadata?: { [key: string]: MetadataValue | undefined };
}

/** Anything that can decide on a rate-limit request. */
export interface RateLimiter {
  /**
   * Decides `request`. `options.timeoutMs` bounds the wait; `options.gone`
   * tells of a caller that has given up, whose decision then counts nothing.
   * A limiter may ignore both: the caller keeps its own deadline then.
   */
  shouldRateLimit(request: RateLimitRequest, options?: DecideOptions): Promise<RateLimitResponse>;
  /**
   * The same decision, given at once when it needs no waiting (a store that
   * decides synchronously, as the memory store does), else as a promise.
   * Throws or rejects as `shouldRateLimit` rejects. Optional: an in-process
   * caller uses it to skip the promise of every request. A limiter that
   * offers it settles within `options.timeoutMs`, counted from when the
   * decision reaches its store (not from the call), and counts nothing it
   * does not answer: the caller arms no deadline of its own.
   */
  decide?(request: RateLimitRequest, options?: DecideOptions): RateLimitResponse | Promise<RateLimitResponse>;
  /**
   * What one request may carry; it refuses more. Optional: a network face
   * given it refuses such a request before decoding it.
   */
  readonly bounds?: RequestBounds;
}
