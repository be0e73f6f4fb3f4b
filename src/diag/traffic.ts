/**
 * @module diag/traffic
 * The traffic the diagnostic page draws: requests, 4xx and 5xx answers of
 * each of the last minutes, of every route together and of the busiest
 * ones, from the gateway's route counters. The gateway's own health probes
 * and metrics scrapes are left out: a probe every few seconds would draw
 * itself as the busiest route.
 */
import { HEALTH_ROUTE } from '../gateway';
import { METRICS_ROUTE, TRAFFIC_MINUTES, type RecentCounts, type RouteCounters } from '../telemetry';
import type { DiagTraffic, DiagTrafficSeries } from './types';

/** Routes drawn apart, at most. */
export const TRAFFIC_ROUTES = 6;

const NOT_DRAWN = new Set([HEALTH_ROUTE, METRICS_ROUTE]);

function series(recent: RecentCounts): DiagTrafficSeries {
  return { requests: recent.requests, clientErrors: recent.clientErrors, errors: recent.errors };
}

/** `a` less `b`, minute by minute. */
function less(a: DiagTrafficSeries, b: RecentCounts): DiagTrafficSeries {
  const minus = (x: number[], y: number[]) => x.map((v, i) => v - y[i]);
  return {
    requests: minus(a.requests, b.requests),
    clientErrors: minus(a.clientErrors, b.clientErrors),
    errors: minus(a.errors, b.errors),
  };
}

/** The traffic of the last {@link TRAFFIC_MINUTES} minutes that `counters` kept, its busiest routes apart. */
export function trafficOf(counters: RouteCounters, routes = TRAFFIC_ROUTES): DiagTraffic {
  const minute = counters.minute();
  let total = series(counters.recent());
  for (const name of NOT_DRAWN) total = less(total, counters.recent(name));
  // Summed in place for every route, so that only the busiest few are copied out.
  const busiest: { name: string; requests: number }[] = [];
  for (const [name] of counters.entries()) {
    if (NOT_DRAWN.has(name)) continue;
    const requests = counters.recentRequests(name);
    if (requests > 0) busiest.push({ name, requests });
  }
  busiest.sort((a, b) => b.requests - a.requests || (a.name < b.name ? -1 : 1));
  return {
    since: new Date((minute - TRAFFIC_MINUTES + 1) * 60_000).toISOString(),
    minutes: TRAFFIC_MINUTES,
    total,
    routes: busiest.slice(0, routes).map(({ name }) => ({ name, ...series(counters.recent(name)) })),
  };
}
