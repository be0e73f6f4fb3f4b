/**
 * @module gateway/events
 * What the gateway tells an observer about its decisions: the auth stage's
 * verdicts, the rate-limit stage's answers and the failures of remote
 * upstreams. The gateway knows nothing of how they are counted; a Gatehouse
 * hands it an implementation backed by its Prometheus metrics.
 */

/** How the auth stage dealt with a request. */
export type AuthOutcome = 'allowed' | 'denied' | 'error' | 'bypassed';

/** How the rate-limit stage dealt with a request it asked about. */
export type RateLimitOutcome = 'ok' | 'over_limit' | 'error';

/** Why a remote upstream gave no answer: past `timeout_ms`, unreachable (refused, not connected within `connect_timeout_ms`, a name that does not resolve), or anything else. */
export type UpstreamFailure = 'timeout' | 'refused' | 'other';

/**
 * Receives the gateway's decisions. Every member is optional, and each is
 * called on the request path: it must be cheap and must not throw.
 */
export interface GatewayEvents {
  /**
   * The auth stage decided: `allowed` (the auth service said 200), `denied`
   * (it refused), `error` (it failed or did not answer, whatever the failure
   * mode made of it), `bypassed` (a `bypass_auth` route).
   */
  authDecision?(outcome: AuthOutcome): void;
  /**
   * The rate-limit service was asked about a request: `ok`, `over_limit`
   * (answered 429), `error` (it failed or did not answer in time). Requests
   * that yield no descriptor are not asked and not reported.
   */
  rateLimitDecision?(outcome: RateLimitOutcome): void;
  /** A remote upstream failed before answering a request routed by the mapping named `route`. */
  upstreamError?(route: string, failure: UpstreamFailure): void;
  /** A request routed by the mapping named `route` is sent again (`retry_policy`). */
  upstreamRetry?(route: string): void;
  /**
   * A circuit breaker of the upstream cluster named `cluster` was open: a
   * request was answered 503 (`max_pending_requests`: every connection busy
   * and the queue full; `max_requests`), or a retry was not made (`max_retries`).
   */
  upstreamOverflow?(cluster: string, limit: UpstreamLimit): void;
  /** An endpoint (`address:port`) of the upstream cluster named `cluster` was ejected after failing 5 times in a row. */
  upstreamEjection?(cluster: string, endpoint: string): void;
}

/** A circuit-breaker limit that turns requests or retries away, as Emissary's `circuit_breakers` name them. */
export type UpstreamLimit = 'max_pending_requests' | 'max_requests' | 'max_retries';

/** Reports nothing. */
export const NO_EVENTS: GatewayEvents = Object.freeze({});
