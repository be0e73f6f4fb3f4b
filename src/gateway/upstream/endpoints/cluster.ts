/**
 * @module gateway/upstream/endpoints/cluster
 * An upstream cluster, as Envoy scopes one: the endpoints of one service with
 * one set of connection settings, a connection pool per endpoint, their
 * balancing and passive ejection, and the circuit breakers of each priority.
 * The Mappings that name the same service with the same settings share it.
 */
import { HttpError, undici } from '../../../http';
import { connectOptions, type UpstreamTls } from '../../../tls';
import type { BalancerPolicy } from './balancer';
import { Balancer } from './balancer';
import { timedConnector } from './connector';
import { Breaker, ENVOY_BREAKER_DEFAULTS, type BreakerLimit, type BreakerLimits } from './breaker';
import { countFailure, Endpoint, returnEjected, type EjectionState } from './endpoint';
import { DnsName, type AddressFamily, type Resolve } from './resolver';
import { originOf } from '../service';

/** What a request is hashed on for `ring_hash` and `maglev`. */
export type HashOn =
  | { readonly header: string }
  | { readonly cookie: { readonly name: string; readonly path?: string; readonly ttlMs?: number } }
  | { readonly sourceIp: true };

/** The settings of a cluster, defaults applied. */
export interface ClusterSettings {
  readonly secure: boolean;
  /** `connect_timeout_ms`: Envoy's default 3000. */
  readonly connectTimeoutMs: number;
  /** `cluster_idle_timeout_ms`: how long an idle connection is kept; undefined for 4 s, or the upstream's Keep-Alive hint. */
  readonly idleTimeoutMs?: number;
  /** `cluster_max_connection_lifetime_ms`: a connection older is not used for another request. */
  readonly lifetimeMs?: number;
  /** `keepalive.idle_time`, in seconds: TCP keep-alive probes after this long idle. */
  readonly keepAliveIdleS?: number;
  /** Connections per endpoint: `max_connections`, else 128. */
  readonly connections: number;
  /** The breakers' limits of each priority (default, high); null without `circuit_breakers`. */
  readonly breakers: readonly [BreakerLimits, BreakerLimits] | null;
  readonly policy: BalancerPolicy;
  readonly hashOn: HashOn | null;
  readonly family: AddressFamily;
  /** `dns_type: logical_dns`: only the first address of a name is used. */
  readonly logicalDns: boolean;
  /** TLS as the Mapping's TLSContext says: its client certificate, authorities and SNI. */
  readonly tls?: UpstreamTls;
  /** `respect_dns_ttl`: a name is looked up again once its records' TTL has passed. */
  readonly respectDnsTtl: boolean;
}

/** One source of endpoints: an IP address, or a name and what it resolves to. */
export interface EndpointSource {
  readonly port: number;
  /** An IP address, or the names to look up (in order). */
  readonly address?: string;
  readonly lookups?: readonly string[];
}

/** What a cluster reports, for metrics. */
export interface ClusterEvents {
  overflow?(cluster: string, limit: BreakerLimit): void;
  ejected?(cluster: string, endpoint: string): void;
}

/** How a cluster is made: the resolver and clock (tests give their own), and who hears of overflows and ejections. */
export interface ClusterContext {
  readonly resolve: Resolve;
  readonly now: () => number;
  readonly events: ClusterEvents;
}

function endpointKey(address: string, port: number): string {
  return `${address.includes(':') ? `[${address}]` : address}:${port}`;
}

export class Cluster implements EjectionState {
  endpoints: readonly Endpoint[] = [];
  ejected = 0;
  /**
   * The breakers of the default and the high priority. Without
   * `circuit_breakers` they have Envoy's defaults and only bound the retries
   * under way (`max_retries` 3); requests are not counted against them.
   */
  readonly breakers: readonly [Breaker, Breaker];
  /** Whether requests count against the breakers (`circuit_breakers` is given). */
  readonly gated: boolean;
  /** Whether requests in flight are counted (`least_request`, breakers). */
  readonly counts: boolean;
  readonly balancer: Balancer;
  private readonly names: { readonly dns: DnsName; readonly port: number }[] = [];
  private readonly fixed: Endpoint[] = [];
  private closed = false;

  constructor(
    readonly name: string,
    readonly settings: ClusterSettings,
    sources: readonly EndpointSource[],
    private readonly context: ClusterContext,
  ) {
    const report = (limit: BreakerLimit) => context.events.overflow?.(name, limit);
    const limits = settings.breakers ?? [ENVOY_BREAKER_DEFAULTS, ENVOY_BREAKER_DEFAULTS];
    this.breakers = [new Breaker(limits[0], report), new Breaker(limits[1], report)];
    this.gated = settings.breakers !== null;
    this.counts = this.gated || settings.policy === 'least_request';
    this.balancer = new Balancer(settings.policy);
    for (const source of sources) {
      if (source.address !== undefined) {
        this.fixed.push(this.endpointFor(source.address, source.port, new Map()));
      } else {
        const rebuild = () => this.rebuild();
        const dns = new DnsName(
          source.lookups!,
          settings.family,
          context.resolve,
          context.now,
          rebuild,
          settings.respectDnsTtl,
        );
        this.names.push({ dns, port: source.port });
      }
    }
    this.endpoints = this.fixed;
  }

  /** Whether its endpoints are IP addresses only, known from the start. */
  get isStatic(): boolean {
    return this.names.length === 0;
  }

  /** The endpoint for a request (`key`: its hash for ring_hash and maglev); undefined before its names resolved. */
  pick(key: number | undefined): Endpoint | undefined {
    // Asking each name for its addresses looks it up again once they are stale.
    for (let i = 0; i < this.names.length; i++) this.names[i].dns.current();
    if (this.ejected > 0) returnEjected(this, this.context.now());
    return this.balancer.pick(this, key);
  }

  /**
   * {@link pick}, once the names have resolved when they have not yet.
   * Throws a 503 {@link HttpError} when they resolve to nothing; `failed` is
   * told first.
   */
  async resolvedPick(key: number | undefined, failed: () => void): Promise<Endpoint> {
    const picked = this.pick(key);
    if (picked !== undefined) return picked;
    try {
      await this.ready();
    } catch (err) {
      failed();
      throw HttpError.of('UPSTREAM_UNRESOLVED', { cause: err });
    }
    const resolved = this.pick(key);
    if (resolved === undefined) throw HttpError.of('UPSTREAM_NO_ADDRESS');
    return resolved;
  }

  /** Waits until its names have resolved; rejects with the lookup's error when none has. */
  async ready(): Promise<void> {
    const results = await Promise.allSettled(this.names.map((n) => n.dns.ready()));
    if (this.endpoints.length > 0) return;
    const failed = results.find((r) => r.status === 'rejected');
    throw failed?.reason ?? new Error(`no address for cluster ${this.name}`);
  }

  /** Counts an answer of `endpoint`: a 5xx (or a failure without answer) counts towards its ejection. */
  outcome(endpoint: Endpoint, failed: boolean): void {
    if (!failed) {
      endpoint.failures = 0;
      return;
    }
    if (countFailure(this, endpoint, this.context.now())) this.context.events.ejected?.(this.name, endpoint.key);
  }

  /** How many endpoints it has, and which of them are ejected now (for diagnostics). */
  health(): { endpoints: number; ejected: string[] } {
    const now = this.context.now();
    const ejected = this.endpoints.filter((e) => e.ejectedUntil > now).map((e) => e.key);
    return { endpoints: this.endpoints.length, ejected };
  }

  /** Closes every pool: gracefully (they finish what they carry), or at once with `force`. */
  close(force = false): Promise<unknown> {
    this.closed = true;
    for (const e of this.endpoints) e.h2?.close(force);
    return Promise.allSettled(this.endpoints.map((e) => (force ? e.pool.destroy() : e.pool.close())));
  }

  /** The endpoints again after a name resolved to other addresses: those kept keep their pool and their record. */
  private rebuild(): void {
    if (this.closed) return;
    const previous = new Map(this.endpoints.map((e) => [e.key, e]));
    const next: Endpoint[] = [...this.fixed];
    for (const { dns, port } of this.names) {
      const addresses = dns.current() ?? [];
      for (const address of this.settings.logicalDns ? addresses.slice(0, 1) : addresses) {
        const key = endpointKey(address, port);
        if (!next.some((e) => e.key === key)) next.push(this.endpointFor(address, port, previous));
      }
    }
    for (const [key, gone] of previous) {
      if (!next.some((e) => e.key === key)) {
        if (gone.ejectedUntil !== 0) this.ejected--;
        void gone.pool.close().catch(() => undefined);
        gone.h2?.close();
      }
    }
    this.endpoints = next;
  }

  private endpointFor(address: string, port: number, previous: ReadonlyMap<string, Endpoint>): Endpoint {
    const key = endpointKey(address, port);
    const known = previous.get(key);
    if (known !== undefined) return known;
    const s = this.settings;
    const pool = new (undici().Pool)(originOf(s.secure, address, port), {
      connections: s.connections,
      connect: timedConnector(s.connectTimeoutMs, s.keepAliveIdleS, s.tls && connectOptions(s.tls)),
      keepAliveTimeout: s.idleTimeoutMs ?? 4000,
      ...(s.idleTimeoutMs !== undefined ? { keepAliveMaxTimeout: s.idleTimeoutMs } : {}),
      ...(s.lifetimeMs !== undefined ? { clientTtl: s.lifetimeMs } : {}),
    });
    return new Endpoint(key, address, port, pool);
  }
}
