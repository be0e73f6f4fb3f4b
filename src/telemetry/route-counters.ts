/**
 * @module telemetry/route-counters
 * Request and error counts per mapping, kept for the diagnostic page (the
 * Prometheus counters hold the same, but are costly to read back): since
 * the start, and minute by minute over the last {@link TRAFFIC_MINUTES}
 * minutes, in a ring of typed arrays made once per route, so that counting
 * a request allocates nothing.
 */

/** The counts of one route, or of all. */
export interface RequestCounts {
  requests: number;
  /** Responses with a 4xx status. */
  clientErrors: number;
  /** Responses with a 5xx status. */
  errors: number;
}

/** Counts of each of the last minutes, the oldest first; the last is the minute under way. */
export interface RecentCounts {
  requests: number[];
  clientErrors: number[];
  errors: number[];
}

/** How many minutes the counts of each minute are kept for. */
export const TRAFFIC_MINUTES = 15;

/** Counts by route name; a route never seen reads as zeros. */
export interface RouteCounters {
  record(route: string, status: number): void;
  get(route: string): Readonly<RequestCounts>;
  totals(): Readonly<RequestCounts>;
  /** Every route seen so far. */
  entries(): IterableIterator<[string, Readonly<RequestCounts>]>;
  /** The counts of each of the last {@link TRAFFIC_MINUTES} minutes, of `route` or (none given) of all. */
  recent(route?: string): RecentCounts;
  /** The requests of `route` over the last {@link TRAFFIC_MINUTES} minutes, in all. */
  recentRequests(route: string): number;
  /** The minute under way, as minutes since 1970: the last of {@link recent}. */
  minute(): number;
}

export interface RouteCountersOptions {
  /** The clock, in ms since 1970. Default `Date.now`. */
  now?: () => number;
}

const ZERO: Readonly<RequestCounts> = Object.freeze({ requests: 0, clientErrors: 0, errors: 0 });
const MINUTE_MS = 60_000;

/** The counts of each minute of a route: slot `m % TRAFFIC_MINUTES` holds minute `m` when `minuteOf` says so. */
interface MinuteRing {
  readonly minuteOf: Float64Array;
  /** Requests, 4xx and 5xx of each slot, three a slot. */
  readonly counts: Uint32Array;
}

interface Counted {
  readonly counts: RequestCounts;
  readonly ring: MinuteRing;
}

function newRing(): MinuteRing {
  return { minuteOf: new Float64Array(TRAFFIC_MINUTES).fill(-1), counts: new Uint32Array(TRAFFIC_MINUTES * 3) };
}

/** Counts one answer of `status` in `counts` and in the slot of `minute`. */
function count(counted: Counted, minute: number, status: number): void {
  const { counts, ring } = counted;
  const slot = minute % TRAFFIC_MINUTES;
  const at = slot * 3;
  if (ring.minuteOf[slot] !== minute) {
    ring.minuteOf[slot] = minute;
    ring.counts[at] = ring.counts[at + 1] = ring.counts[at + 2] = 0;
  }
  counts.requests++;
  ring.counts[at]++;
  if (status >= 500) {
    counts.errors++;
    ring.counts[at + 2]++;
  } else if (status >= 400) {
    counts.clientErrors++;
    ring.counts[at + 1]++;
  }
}

/** The counts of each minute of `ring` up to `minute`, the oldest first. */
function recentOf(ring: MinuteRing | undefined, minute: number): RecentCounts {
  const recent: RecentCounts = { requests: [], clientErrors: [], errors: [] };
  for (let m = minute - TRAFFIC_MINUTES + 1; m <= minute; m++) {
    const slot = m % TRAFFIC_MINUTES;
    const kept = ring !== undefined && ring.minuteOf[slot] === m;
    recent.requests.push(kept ? ring.counts[slot * 3] : 0);
    recent.clientErrors.push(kept ? ring.counts[slot * 3 + 1] : 0);
    recent.errors.push(kept ? ring.counts[slot * 3 + 2] : 0);
  }
  return recent;
}

/** The requests of `ring` over the minutes up to `minute`. */
function recentRequestsOf(ring: MinuteRing | undefined, minute: number): number {
  if (ring === undefined) return 0;
  let total = 0;
  for (let slot = 0; slot < TRAFFIC_MINUTES; slot++)
    if (ring.minuteOf[slot] > minute - TRAFFIC_MINUTES) total += ring.counts[slot * 3];
  return total;
}

/** Builds empty counters. */
export function createRouteCounters(options: RouteCountersOptions = {}): RouteCounters {
  const now = options.now ?? Date.now;
  const byRoute = new Map<string, Counted>();
  const all: Counted = { counts: { requests: 0, clientErrors: 0, errors: 0 }, ring: newRing() };
  const minute = () => Math.floor(now() / MINUTE_MS);
  return {
    record(route, status) {
      let counted = byRoute.get(route);
      if (!counted)
        byRoute.set(route, (counted = { counts: { requests: 0, clientErrors: 0, errors: 0 }, ring: newRing() }));
      const m = minute();
      count(counted, m, status);
      count(all, m, status);
    },
    get: (route) => byRoute.get(route)?.counts ?? ZERO,
    totals: () => ({ ...all.counts }),
    *entries() {
      for (const [route, counted] of byRoute) yield [route, counted.counts];
    },
    recent: (route) => recentOf(route === undefined ? all.ring : byRoute.get(route)?.ring, minute()),
    recentRequests: (route) => recentRequestsOf(byRoute.get(route)?.ring, minute()),
    minute,
  };
}
