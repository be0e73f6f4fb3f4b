/**
 * @module gateway/upstream/endpoints/clusters
 * The upstream clusters of one configuration and what each remote route
 * holds: a Mapping's `service` and upstream fields made into a cluster,
 * shared by the Mappings that name the same service with the same settings
 * (Envoy's clusters are named and shared so in Emissary), and the route's own
 * retry policy, idle timeout and breaker priority.
 */
import { createHash } from 'node:crypto';
import type { MappingRecord } from '../../config/schema';
import { ENVOY_BREAKER_DEFAULTS, type BreakerLimits } from './breaker';
import { Cluster, type ClusterContext, type ClusterSettings, type EndpointSource, type HashOn } from './cluster';
import type { AddressFamily } from './resolver';
import { DEFAULT_BASE_INTERVAL_MS, parseDuration, retryConditions, type RetryPolicy } from '../retry';
import { parseEndpointAddress, type NameContext, type ServiceAddress } from '../service';

/** Envoy's default `connect_timeout_ms`, as Emissary sets it. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 3000;

/** Connections per endpoint without `circuit_breakers`. */
const DEFAULT_CONNECTIONS = 128;

/** What a remote route forwards with: where, through which cluster, and its own retry, idle and priority settings. */
export interface RouteUpstream {
  readonly address: ServiceAddress;
  readonly cluster: Cluster;
  /** `retry_policy`; null for none. */
  readonly retry: RetryPolicy | null;
  /** `idle_timeout_ms`: the longest silence on the request's stream, either way; 0 for none. */
  readonly idleTimeoutMs: number;
  /** Which breakers it counts against: 0 default, 1 high. */
  readonly priority: 0 | 1;
}

function family(m: MappingRecord): AddressFamily {
  const v4 = m.enable_ipv4 ?? true;
  const v6 = m.enable_ipv6 ?? false;
  return v4 && v6 ? 'auto' : v6 ? 'v6' : 'v4';
}

function breakerLimits(m: MappingRecord): readonly [BreakerLimits, BreakerLimits] | null {
  if (m.circuit_breakers === undefined) return null;
  const of = (priority: 'default' | 'high'): BreakerLimits => {
    const b = m.circuit_breakers!.find((t) => t.priority === priority);
    return {
      maxConnections: b?.max_connections ?? ENVOY_BREAKER_DEFAULTS.maxConnections,
      maxPendingRequests: b?.max_pending_requests ?? ENVOY_BREAKER_DEFAULTS.maxPendingRequests,
      maxRequests: b?.max_requests ?? ENVOY_BREAKER_DEFAULTS.maxRequests,
      maxRetries: b?.max_retries ?? ENVOY_BREAKER_DEFAULTS.maxRetries,
    };
  };
  return [of('default'), of('high')];
}

function hashOn(m: MappingRecord): HashOn | null {
  const lb = m.load_balancer;
  if (lb === undefined || (lb.policy !== 'ring_hash' && lb.policy !== 'maglev')) return null;
  if (lb.header !== undefined) return { header: lb.header };
  if (lb.cookie !== undefined) {
    const ttl = lb.cookie.ttl === undefined ? undefined : parseDuration(lb.cookie.ttl);
    return {
      cookie: {
        name: lb.cookie.name,
        ...(lb.cookie.path !== undefined ? { path: lb.cookie.path } : {}),
        ...(ttl !== undefined ? { ttlMs: ttl } : {}),
      },
    };
  }
  return { sourceIp: true };
}

/** A Mapping's cluster settings, defaults applied. */
export function clusterSettings(m: MappingRecord, address: ServiceAddress): ClusterSettings {
  const breakers = breakerLimits(m);
  return {
    secure: address.secure,
    connectTimeoutMs: m.connect_timeout_ms ?? DEFAULT_CONNECT_TIMEOUT_MS,
    ...(m.cluster_idle_timeout_ms !== undefined ? { idleTimeoutMs: m.cluster_idle_timeout_ms } : {}),
    ...(m.cluster_max_connection_lifetime_ms !== undefined ? { lifetimeMs: m.cluster_max_connection_lifetime_ms } : {}),
    ...(m.keepalive?.idle_time !== undefined ? { keepAliveIdleS: m.keepalive.idle_time } : {}),
    connections: breakers === null ? DEFAULT_CONNECTIONS : breakers[0].maxConnections,
    breakers,
    policy: m.load_balancer?.policy ?? 'round_robin',
    hashOn: hashOn(m),
    family: family(m),
    logicalDns: m.dns_type === 'logical_dns',
    respectDnsTtl: m.respect_dns_ttl === true,
  };
}

/** Where a Mapping's requests may go: its `endpoints`, else its service's own address or name. */
export function endpointSources(m: MappingRecord, address: ServiceAddress, names: NameContext): EndpointSource[] {
  const listed = m.endpoints?.map((text) => parseEndpointAddress(text, address.port, names)!) ?? [address];
  return listed.map((e) =>
    e.lookups.length === 0 ? { address: e.hostname, port: e.port } : { lookups: e.lookups, port: e.port },
  );
}

/** A `retry_policy`, compiled; null for none. */
export function retryPolicy(m: MappingRecord): RetryPolicy | null {
  const r = m.retry_policy;
  if (r === undefined) return null;
  const base =
    r.retry_back_off === undefined ? DEFAULT_BASE_INTERVAL_MS : parseDuration(r.retry_back_off.base_interval)!;
  const max = r.retry_back_off?.max_interval === undefined ? base * 10 : parseDuration(r.retry_back_off.max_interval)!;
  return {
    on: retryConditions(r.retry_on).bits,
    numRetries: r.num_retries,
    perTryTimeoutMs: r.per_try_timeout === undefined ? 0 : Math.max(1, Math.round(parseDuration(r.per_try_timeout)!)),
    baseIntervalMs: base,
    maxIntervalMs: max,
    statuses: new Set(r.retriable_status_codes ?? []),
  };
}

/** A name for metrics and messages, from the service as written: `cluster_quote_shop`, `cluster_10_0_0_7_8080_otls`. */
function baseName(m: MappingRecord, address: ServiceAddress): string {
  const qualified =
    !address.hostname.includes('.') && m.namespace !== undefined && address.lookups.length > 0
      ? `${address.hostname}.${m.namespace}`
      : address.hostname;
  const written = address.host.endsWith(`:${address.port}`) ? `${qualified}:${address.port}` : qualified;
  const parts = [
    'cluster',
    ...(m.cluster_tag !== undefined ? [m.cluster_tag] : []),
    written,
    ...(address.secure ? ['otls'] : []),
  ];
  return parts.join('_').replace(/[^0-9A-Za-z_]/g, '_');
}

/** The clusters of one configuration, made on first use and shared by key. */
export class ClusterSet {
  private readonly byKey = new Map<string, Cluster>();
  private readonly names = new Set<string>();

  constructor(
    private readonly context: ClusterContext,
    private readonly nameContext: NameContext,
  ) {}

  /** The route upstream of a Mapping whose service is `address`. */
  route(m: MappingRecord, address: ServiceAddress): RouteUpstream {
    const names = { ...this.nameContext, ...(m.namespace !== undefined ? { namespace: m.namespace } : {}) };
    const settings = clusterSettings(m, address);
    const sources = endpointSources(m, address, names);
    // TLS presents host_rewrite's name: connections for another name are another cluster's, as in Emissary.
    const key = JSON.stringify([
      settings,
      sources,
      m.cluster_tag ?? null,
      address.secure ? (m.host_rewrite ?? null) : null,
    ]);
    let cluster = this.byKey.get(key);
    if (cluster === undefined) {
      let name = baseName(m, address);
      // Another cluster of the same service, with other settings: Emissary would merge it into the first, silently.
      if (this.names.has(name)) name = `${name}_${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
      this.names.add(name);
      cluster = new Cluster(name, settings, sources, this.context);
      this.byKey.set(key, cluster);
    }
    return {
      address,
      cluster,
      retry: retryPolicy(m),
      idleTimeoutMs: m.idle_timeout_ms ?? m.cluster_idle_timeout_ms ?? 0,
      priority: m.priority === 'high' ? 1 : 0,
    };
  }

  /** Every cluster made. */
  all(): Cluster[] {
    return [...this.byKey.values()];
  }
}
