/**
 * @module telemetry/route-counters
 * Request and error counts per mapping, kept for the diagnostic page (the
 * Prometheus counters hold the same, but are costly to read back).
 */

/** The counts of one route, or of all. */
export interface RequestCounts {
  requests: number;
  /** Responses with a 4xx status. */
  clientErrors: number;
  /** Responses with a 5xx status. */
  errors: number;
}

/** Counts by route name; a route never seen reads as zeros. */
export interface RouteCounters {
  record(route: string, status: number): void;
  get(route: string): Readonly<RequestCounts>;
  totals(): Readonly<RequestCounts>;
  /** Every route seen so far. */
  entries(): IterableIterator<[string, Readonly<RequestCounts>]>;
}

const ZERO: Readonly<RequestCounts> = Object.freeze({ requests: 0, clientErrors: 0, errors: 0 });

/** Builds empty counters. */
export function createRouteCounters(): RouteCounters {
  const byRoute = new Map<string, RequestCounts>();
  const all: RequestCounts = { requests: 0, clientErrors: 0, errors: 0 };
  return {
    record(route, status) {
      let counts = byRoute.get(route);
      if (!counts) byRoute.set(route, (counts = { requests: 0, clientErrors: 0, errors: 0 }));
      counts.requests++;
      all.requests++;
      if (status >= 500) {
        counts.errors++;
        all.errors++;
      } else if (status >= 400) {
        counts.clientErrors++;
        all.clientErrors++;
      }
    },
    get: (route) => byRoute.get(route) ?? ZERO,
    totals: () => ({ ...all }),
    entries: () => byRoute.entries(),
  };
}
