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

/** Why a remote upstream gave no answer: past `timeout_ms`, unreachable, or anything else. */
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
}

/** Reports nothing. */
export const NO_EVENTS: GatewayEvents = Object.freeze({});
