/**
 * @module ratelimit/store
 * Where the counters of the fixed windows live. A store decides all the
 * counted descriptors of one request at once, atomically: either every
 * counter takes its hits, or (when an enforced one would go over) none does,
 * so a refused request uses up no quota of its other descriptors.
 *
 * Within a request the checks count in order, as envoyproxy/ratelimit's
 * INCRBY per descriptor does: a check sees its counter plus the hits of the
 * earlier checks on the same counter (a descriptor listed twice, or values
 * sharing a `share_threshold` wildcard), so one request cannot slip several
 * hits past a limit that each would pass alone.
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
  /**
   * Each counter's value before this request, in the order of the checks
   * (the same for checks on one counter): add {@link earlierHits} for what a
   * check saw.
   */
  before: number[];
}

/** What a caller asks of one decision besides its checks. */
export interface DecideOptions {
  /**
   * Longest wait for the store, in ms: from when the decision is sent to it,
   * not from when it was asked for, and counting only the time this process
   * was free to read the answer (see ./deadline). The store's own default
   * when absent.
   */
  timeoutMs?: number;
  /**
   * Whether the caller has given up (a gRPC call cancelled or past its
   * deadline): a decision its caller left is not counted, or is taken back.
   */
  gone?: () => boolean;
  /**
   * Headers to send with the call to a remote service, as gRPC metadata:
   * the trace context of the decision's span (`traceparent`...).
   */
  metadata?: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * The store did not decide within the deadline. Nothing is counted: a
 * decision Redis makes later counts nothing, or is taken back.
 */
export class StoreTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`rate-limit store timed out: no decision within ${timeoutMs} ms`);
    this.name = 'StoreTimeoutError';
  }
}

/** The caller gave up before the store answered: nothing is counted. */
export class CallerGoneError extends Error {
  constructor() {
    super('the caller gave up before the rate-limit store answered');
    this.name = 'CallerGoneError';
  }
}

/** A counter store: memory (one process) or Redis (shared by processes). */
export interface RateLimitStore {
  /** `memory`, `redis`: for diagnostics. */
  readonly kind: string;
  /**
   * Decides a request; rejects when the store cannot answer (Redis down, too
   * slow), and then has counted nothing.
   */
  decide(checks: readonly WindowCheck[], options?: DecideOptions): StoreDecision | Promise<StoreDecision>;
  /** Releases connections. */
  close(): Promise<void>;
}

/**
 * The decision rule shared by every store, for the value a check sees (its
 * counter plus the hits of earlier checks on it).
 */
export function wouldExceed(check: WindowCheck, current: number): boolean {
  return check.enforce && current + check.hits > check.limit;
}

/**
 * Per check, the hits of the earlier checks of the request on the same
 * counter; undefined when no counter appears twice (the usual request, which
 * then costs no array).
 */
export function earlierHits(checks: readonly WindowCheck[]): number[] | undefined {
  if (checks.length < 2) return undefined;
  // A request has a few descriptors: comparing each key with those before it
  // costs less than a Map made for every decision. Many are counted by one.
  if (checks.length > FEW_CHECKS) return earlierHitsByMap(checks);
  let out: number[] | undefined;
  for (let i = 1; i < checks.length; i++) {
    const key = checks[i].key;
    for (let j = 0; j < i; j++) {
      if (checks[j].key === key) (out ??= new Array<number>(checks.length).fill(0))[i] += checks[j].hits;
    }
  }
  return out;
}

/** Past this many checks, {@link earlierHits} counts by a Map. */
const FEW_CHECKS = 8;

function earlierHitsByMap(checks: readonly WindowCheck[]): number[] | undefined {
  let out: number[] | undefined;
  const sums = new Map<string, number>();
  for (let i = 0; i < checks.length; i++) {
    const { key, hits } = checks[i];
    const sum = sums.get(key);
    if (sum !== undefined) (out ??= new Array<number>(checks.length).fill(0))[i] = sum;
    sums.set(key, (sum ?? 0) + hits);
  }
  return out;
}
