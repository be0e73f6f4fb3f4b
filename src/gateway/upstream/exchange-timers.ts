/**
 * @module gateway/upstream/exchange-timers
 * The timers of a request forwarded to a remote upstream (./forward), as
 * Envoy's: `timeout_ms` counts from the end of the request body and bounds
 * every try together (504, never retried); `per_try_timeout` bounds each
 * try's wait for its answer's headers (504, or another try);
 * `idle_timeout_ms` bounds each silence, the client's upload (408) as much
 * as the upstream's answer (504).
 */
import type { RouteUpstream } from './endpoints/clusters';

/** The shorter of two limits, 0 standing for none. */
export function shorter(a: number, b: number): number {
  return a === 0 ? b : b === 0 ? a : Math.min(a, b);
}

/** What the timers tell their request. */
export interface TimedExchange {
  /** `timeout_ms` passed: whatever is under way ends, and nothing is tried again. */
  expire(): void;
  /** The try under way passed its limit. */
  expireTry(): void;
}

// Timer callbacks that take their timers as argument: no closure per request.
const expire = (timers: ExchangeTimers): void => timers.expired();
const expireTry = (timers: ExchangeTimers): void => timers.tryExpired();

/** The timers of one request, and which of them passed. */
export class ExchangeTimers {
  /** `timeout_ms` passed. */
  timedOut = false;
  /** Which limit cut the try under way short: its `per_try_timeout`, or `idle_timeout_ms`; null while none did. */
  tryTimedOut: 'per-try' | 'idle' | null = null;
  /** Each try's limit: the shorter of `per_try_timeout` and `idle_timeout_ms`; 0 for none. */
  readonly tryLimit: number;
  /** Whether {@link tryLimit} is the `per_try_timeout`. */
  private readonly perTry: boolean;
  private timer: NodeJS.Timeout | undefined;
  private tryTimer: NodeJS.Timeout | undefined;

  constructor(
    /** `timeout_ms`; 0 for none. */
    private readonly overallMs: number,
    upstream: RouteUpstream,
    private readonly exchange: TimedExchange,
  ) {
    const perTryMs = upstream.retry?.perTryTimeoutMs ?? 0;
    this.tryLimit = shorter(perTryMs, upstream.idleTimeoutMs);
    this.perTry = upstream.retry !== null && this.tryLimit === perTryMs;
  }

  /** Starts `timeout_ms`, unless it runs already. */
  startOverall(): void {
    if (this.overallMs > 0 && this.timer === undefined) this.timer = setTimeout(expire, this.overallMs, this);
  }

  /** Starts the limit of the try under way. */
  startTry(): void {
    if (this.tryLimit > 0) this.tryTimer = setTimeout(expireTry, this.tryLimit, this);
  }

  stopTry(): void {
    clearTimeout(this.tryTimer);
  }

  stopOverall(): void {
    clearTimeout(this.timer);
  }

  stop(): void {
    clearTimeout(this.timer);
    clearTimeout(this.tryTimer);
  }

  expired(): void {
    this.timedOut = true;
    this.exchange.expire();
  }

  tryExpired(): void {
    this.tryTimedOut = this.perTry ? 'per-try' : 'idle';
    this.exchange.expireTry();
  }
}
