/**
 * @module gateway/upstream/endpoints/balancer
 * Which endpoint of a cluster takes a request (`load_balancer.policy`):
 * `round_robin` (the default) in turn; `least_request` the one with fewer
 * requests in flight of two picked at random (Envoy's power of two
 * choices); `ring_hash` and `maglev` the endpoint a hash of the request's
 * header, cookie or client address lands on, on a ring of points, so that one
 * key keeps its endpoint while the endpoints stay. Ejected endpoints are
 * passed over, unless fewer than half are in.
 */
import { panicking, type EjectionState, type Endpoint } from './endpoint';

export type BalancerPolicy = 'round_robin' | 'least_request' | 'ring_hash' | 'maglev';

/** Points each endpoint has on the hash ring: enough for an even spread over a few dozen endpoints. */
const POINTS_PER_ENDPOINT = 160;

/** FNV-1a, 32 bits: a cheap hash that allocates nothing, spread further by a final mix. */
export function hashKey(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/** A hash ring over endpoints: sorted points and the endpoint of each. */
interface Ring {
  readonly endpoints: readonly Endpoint[];
  readonly points: Uint32Array;
  readonly owners: Uint16Array;
}

function buildRing(endpoints: readonly Endpoint[]): Ring {
  const pairs: [number, number][] = [];
  endpoints.forEach((endpoint, owner) => {
    for (let i = 0; i < POINTS_PER_ENDPOINT; i++) pairs.push([hashKey(`${endpoint.key}_${i}`), owner]);
  });
  pairs.sort((a, b) => a[0] - b[0]);
  return { endpoints, points: Uint32Array.from(pairs, (p) => p[0]), owners: Uint16Array.from(pairs, (p) => p[1]) };
}

export class Balancer {
  private next = 0;
  private ring: Ring | null = null;

  constructor(readonly policy: BalancerPolicy) {}

  /**
   * The endpoint for a request, `key` its hash key for `ring_hash` and
   * `maglev` (undefined when the request has none: it is then balanced in
   * turn); undefined when the cluster has no endpoint.
   */
  pick(state: EjectionState, key: number | undefined): Endpoint | undefined {
    const endpoints = state.endpoints;
    const n = endpoints.length;
    if (n <= 1) return endpoints[0];
    const all = state.ejected === 0 || panicking(state);
    if (key !== undefined && (this.policy === 'ring_hash' || this.policy === 'maglev'))
      return this.onRing(endpoints, key, all);
    if (this.policy === 'least_request') return this.leastRequest(endpoints, all);
    for (let tries = 0; tries < n; tries++) {
      const endpoint = endpoints[this.next++ % n];
      if (all || endpoint.ejectedUntil === 0) return endpoint;
    }
    return endpoints[0];
  }

  /** Of two endpoints picked at random (two different ones), the one with fewer requests in flight. */
  private leastRequest(endpoints: readonly Endpoint[], all: boolean): Endpoint {
    const eligible = all ? endpoints : endpoints.filter((e) => e.ejectedUntil === 0);
    const n = eligible.length;
    if (n === 1) return eligible[0];
    const a = Math.floor(Math.random() * n);
    let b = Math.floor(Math.random() * (n - 1));
    if (b >= a) b++;
    return eligible[b].active < eligible[a].active ? eligible[b] : eligible[a];
  }

  private onRing(endpoints: readonly Endpoint[], key: number, all: boolean): Endpoint {
    let ring = this.ring;
    if (ring === null || ring.endpoints !== endpoints) this.ring = ring = buildRing(endpoints);
    const points = ring.points;
    // The first point at or after the key, wrapping round.
    let lo = 0;
    let hi = points.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (points[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    for (let i = 0; i < points.length; i++) {
      const endpoint = endpoints[ring.owners[(lo + i) % points.length]];
      if (all || endpoint.ejectedUntil === 0) return endpoint;
    }
    return endpoints[0];
  }
}
