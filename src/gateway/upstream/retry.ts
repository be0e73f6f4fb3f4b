/**
 * @module gateway/upstream/retry
 * A Mapping's `retry_policy`, as Envoy's router applies it: which answers
 * and failures are tried again (`retry_on`), how often (`num_retries`), how
 * long each try may wait for its answer (`per_try_timeout`), and the fully
 * jittered exponential back-off between tries.
 */

/** Why a try gave no answer to pass on. */
export type TryFailure =
  /** No connection could be made: refused, unreachable, or not within `connect_timeout_ms`. */
  | 'connect'
  /** The connection failed or closed before the answer's headers, or the answer was not HTTP. */
  | 'reset'
  /** `per_try_timeout` passed before the answer's headers. */
  | 'per-try-timeout';

/** The conditions of `retry_on`, as bits. */
export const RETRY_ON = {
  '5xx': 1,
  'gateway-error': 2,
  'connect-failure': 4,
  'retriable-4xx': 8,
  'refused-stream': 16,
  reset: 32,
  'retriable-status-codes': 64,
} as const;

export type RetryCondition = keyof typeof RETRY_ON;

/** A `retry_policy`, compiled once. */
export interface RetryPolicy {
  /** The conditions, as {@link RETRY_ON} bits. */
  readonly on: number;
  /** Tries after the first: Envoy's default 1. */
  readonly numRetries: number;
  /** How long each try waits for its answer's headers; 0 for `timeout_ms` alone. */
  readonly perTryTimeoutMs: number;
  /** The back-off's base interval (Envoy's 25 ms) and cap (Envoy's ten times the base). */
  readonly baseIntervalMs: number;
  readonly maxIntervalMs: number;
  /** The statuses `retriable-status-codes` tries again. */
  readonly statuses: ReadonlySet<number>;
}

/** Envoy's default back-off base interval. */
export const DEFAULT_BASE_INTERVAL_MS = 25;

const DURATION = /^([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)$/;
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A duration as Emissary's fields write them (`1s`, `1.5s`, `250ms`, Go's
 * units), in milliseconds; undefined when it is not one.
 */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (match === null) return undefined;
  return Number(match[1]) * UNIT_MS[match[2]];
}

/** The conditions of a `retry_on` (one, or several separated by commas, as Envoy reads them). */
export function retryConditions(retryOn: string): { bits: number; unknown: string[] } {
  let bits = 0;
  const unknown: string[] = [];
  for (const part of retryOn.split(',')) {
    const name = part.trim();
    if (Object.prototype.hasOwnProperty.call(RETRY_ON, name)) bits |= RETRY_ON[name as RetryCondition];
    else unknown.push(name);
  }
  return { bits, unknown };
}

/**
 * Whether an answer with `status` is tried again. An answer that says
 * `x-envoy-overloaded` is not: the upstream asks for less, not more.
 */
export function retriesStatus(policy: RetryPolicy, status: number, overloaded: boolean): boolean {
  if (overloaded) return false;
  const on = policy.on;
  if (status >= 500) {
    if (on & RETRY_ON['5xx']) return true;
    if (on & RETRY_ON['gateway-error'] && status >= 502 && status <= 504) return true;
  }
  if (status === 409 && on & RETRY_ON['retriable-4xx']) return true;
  return (on & RETRY_ON['retriable-status-codes']) !== 0 && policy.statuses.has(status);
}

/**
 * Whether a try that gave no answer is tried again: every failure under
 * `5xx`, `gateway-error` and `reset`; a failed connection under
 * `connect-failure` too. (`refused-stream` is HTTP/2's: an HTTP/1.1
 * upstream never refuses a stream.)
 */
export function retriesFailure(policy: RetryPolicy, failure: TryFailure): boolean {
  const on = policy.on;
  if (on & (RETRY_ON['5xx'] | RETRY_ON['gateway-error'] | RETRY_ON.reset)) return true;
  return failure === 'connect' && (on & RETRY_ON['connect-failure']) !== 0;
}

/**
 * The wait before retry number `retry` (1 for the first): Envoy's fully
 * jittered back-off, a random time in `[0, (2^retry - 1) × base)`, capped at
 * the maximum interval.
 */
export function backoffMs(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min((2 ** retry - 1) * policy.baseIntervalMs, policy.maxIntervalMs);
  return Math.floor(random() * ceiling);
}
