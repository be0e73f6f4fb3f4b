/**
 * @module gateway/upstream/endpoints/breaker
 * One priority's circuit breakers of an upstream cluster, as Envoy keeps
 * them: requests in flight (each holding a connection: HTTP/1.1, no
 * pipelining) up to `max_connections`, then up to `max_pending_requests`
 * waiting for one, `max_requests` in flight at most, `max_retries` retries
 * under way at most. A request past a limit is answered 503 with
 * `x-envoy-overloaded`, at once: a breaker that is open fails fast.
 */
import { HttpError } from '../../../http';
import type { UpstreamLimit } from '../../events';

/** The thresholds, with Envoy's defaults for those left out. */
export interface BreakerLimits {
  readonly maxConnections: number;
  readonly maxPendingRequests: number;
  readonly maxRequests: number;
  readonly maxRetries: number;
}

/** Envoy's defaults: 1024 connections, pending requests and requests, 3 retries. */
export const ENVOY_BREAKER_DEFAULTS: BreakerLimits = {
  maxConnections: 1024,
  maxPendingRequests: 1024,
  maxRequests: 1024,
  maxRetries: 3,
};

/** A limit a request or retry came up against. */
export type BreakerLimit = UpstreamLimit;

/** The answer to a request turned away by an open breaker. */
export function overflow(limit: BreakerLimit, value: number): HttpError {
  return HttpError.of('UPSTREAM_OVERLOADED', { limit, value });
}

/** A request waiting for a connection: `ready` resolves once it has one. */
export class Waiting {
  readonly ready: Promise<void>;
  resolve!: () => void;
  reject!: (err: unknown) => void;

  constructor(private readonly queue: Waiting[]) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Stops waiting (the client left, the time is up): `ready` rejects with `err`. */
  cancel(err: unknown): void {
    const at = this.queue.indexOf(this);
    if (at === -1) return;
    this.queue.splice(at, 1);
    this.reject(err);
  }
}

export class Breaker {
  /** Requests sent and not yet answered to their end. */
  active = 0;
  /** Retries under way. */
  retries = 0;
  private readonly queue: Waiting[] = [];

  constructor(
    readonly limits: BreakerLimits,
    private readonly onOverflow: (limit: BreakerLimit) => void,
  ) {}

  /** Requests waiting for a connection. */
  get pending(): number {
    return this.queue.length;
  }

  /**
   * Takes a place for one request: at once (returns null), or once a request
   * ahead of it is done (returns its {@link Waiting}). Throws the 503 of
   * {@link overflow} when a limit is reached.
   */
  acquire(): Waiting | null {
    const limits = this.limits;
    if (this.active >= limits.maxRequests) throw this.open('max_requests', limits.maxRequests);
    if (this.active < limits.maxConnections) {
      this.active++;
      return null;
    }
    if (this.queue.length >= limits.maxPendingRequests)
      throw this.open('max_pending_requests', limits.maxPendingRequests);
    const waiting = new Waiting(this.queue);
    this.queue.push(waiting);
    return waiting;
  }

  /** Gives up a place taken with {@link acquire}: the first request waiting, if any, takes it. */
  release(): void {
    const next = this.queue.shift();
    if (next !== undefined) next.resolve();
    else this.active--;
  }

  /** Takes a retry's place; false (and counted as an overflow) when `max_retries` are under way. */
  startRetry(): boolean {
    if (this.retries >= this.limits.maxRetries) {
      this.onOverflow('max_retries');
      return false;
    }
    this.retries++;
    return true;
  }

  endRetry(): void {
    this.retries--;
  }

  private open(limit: BreakerLimit, value: number): HttpError {
    this.onOverflow(limit);
    return overflow(limit, value);
  }
}
