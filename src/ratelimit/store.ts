/**
 * @module ratelimit/store
 * Where the counters of the fixed windows live. A store decides all the
 * counted descriptors of one request at once, atomically: either every
 * counter takes its hits, or (when an enforced one would go over) none does,
 * so a refused request uses up no quota of its other descriptors.
 */

/** One counter to check and, if the request is admitted, to increment. */
export interface WindowCheck {
  /** The counter's key, window included; the store may put a prefix in front. */
  key: string;
  /** Hits to add; 0 checks without counting. */
  hits: number;
  /** Requests allowed in the window. */
  limit: number;
  /** Milliseconds until the window ends: how long the counter must live. */
  ttlMs: number;
  /** False for a shadow-mode rule: counted, never refusing. */
  enforce: boolean;
}

/** What a store decided for one request. */
export interface StoreDecision {
  /**
   * True when no enforced counter would have gone over its limit: every
   * counter then took its hits. False: no counter changed.
   */
  admitted: boolean;
  /** Each counter's value before this request, in the order of the checks. */
  before: number[];
}

/** A counter store: memory (one process) or Redis (shared by processes). */
export interface RateLimitStore {
  /** `memory`, `redis`: for diagnostics. */
  readonly kind: string;
  /** Decides a request; rejects when the store cannot answer (Redis down, too slow). */
  decide(checks: readonly WindowCheck[]): StoreDecision | Promise<StoreDecision>;
  /** Releases connections. */
  close(): Promise<void>;
}

/** The decision rule shared by every store, for one counter value. */
export function wouldExceed(check: WindowCheck, current: number): boolean {
  return check.enforce && current + check.hits > check.limit;
}
