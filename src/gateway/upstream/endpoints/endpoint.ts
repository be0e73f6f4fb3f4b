/**
 * @module gateway/upstream/endpoints/endpoint
 * One address of an upstream cluster, its connection pool, and what passive
 * ejection knows of it, as Envoy's outlier detection does by default: 5
 * failures in a row (5xx answers, failed connections, resets, timeouts) eject
 * it for 30 s times the number of times it was ejected (at most 300 s), one
 * fewer for every 10 s it stays in; at most 10% of a cluster's endpoints (at
 * least one) are out at a time, and below half of them in, every endpoint
 * takes requests again (Envoy's panic threshold).
 */
import type { Pool } from 'undici';

/** The HTTP/2 connection of an endpoint's gRPC calls (../grpc/session), as its cluster closes it. */
export interface EndpointSession {
  /** Gracefully (its calls finish), or at once with `force`. */
  close(force?: boolean): void;
}

/** Envoy's outlier-detection defaults. */
export const OUTLIER = {
  consecutiveFailures: 5,
  baseEjectionMs: 30_000,
  maxEjectionMs: 300_000,
  intervalMs: 10_000,
  maxEjectionPercent: 10,
} as const;

export class Endpoint {
  /** Requests sent to it and not yet answered to their end (for `least_request`). */
  active = 0;
  /** Failures in a row. */
  failures = 0;
  /** Until when it is ejected; 0 when it is not. */
  ejectedUntil = 0;
  /** How many times in a row it was ejected, which lengthens the next ejection. */
  ejections = 0;
  /** When it last came back, for the decay of {@link ejections}. */
  returnedAt = 0;
  /** The HTTP/2 connection gRPC calls share, made for the first of them. */
  h2: EndpointSession | null = null;

  constructor(
    /** `address:port` (`[v6]:port`), as shown and counted. */
    readonly key: string,
    readonly address: string,
    readonly port: number,
    readonly pool: Pool,
  ) {}
}

/** What a cluster's endpoints need to eject and bring back one of them. */
export interface EjectionState {
  readonly endpoints: readonly Endpoint[];
  /** How many are out now. */
  ejected: number;
}

/** How many of `total` endpoints may be out at once: 10%, and at least one. */
function ejectable(total: number): number {
  return Math.max(1, Math.floor((total * OUTLIER.maxEjectionPercent) / 100));
}

/**
 * Counts a failure of `endpoint`; ejects it when it failed 5 times in a row
 * and the cluster may lose one more. Returns whether it was ejected.
 */
export function countFailure(state: EjectionState, endpoint: Endpoint, now: number): boolean {
  if (endpoint.ejectedUntil !== 0) return false;
  if (++endpoint.failures < OUTLIER.consecutiveFailures) return false;
  endpoint.failures = 0;
  if (state.endpoints.length < 2 || state.ejected >= ejectable(state.endpoints.length)) return false;
  const decayed = Math.floor((now - endpoint.returnedAt) / OUTLIER.intervalMs);
  endpoint.ejections = Math.max(0, endpoint.ejections - decayed) + 1;
  endpoint.ejectedUntil = now + Math.min(OUTLIER.baseEjectionMs * endpoint.ejections, OUTLIER.maxEjectionMs);
  state.ejected++;
  return true;
}

/** Brings back the endpoints whose ejection is over. */
export function returnEjected(state: EjectionState, now: number): void {
  for (const endpoint of state.endpoints) {
    if (endpoint.ejectedUntil !== 0 && endpoint.ejectedUntil <= now) {
      endpoint.ejectedUntil = 0;
      endpoint.returnedAt = now;
      state.ejected--;
    }
  }
}

/** Whether requests go to ejected endpoints too: fewer than half of them are in (Envoy's 50% panic threshold). */
export function panicking(state: EjectionState): boolean {
  return (state.endpoints.length - state.ejected) * 2 < state.endpoints.length;
}
