/**
 * @module gateway/types
 * The shapes the gateway's parts share: a route's target (an in-process
 * module, a remote upstream, a redirect) with what every route has besides
 * it, the runtime one configuration is served with, and what a runtime is
 * built with. ./runtime builds them; admission, routing and the stages read
 * them.
 */
import type { Middleware } from 'koa';
import type { ErrorOverrides } from './error-overrides';
import type { ModulePolicies } from './module-policies';
import type { Stage, StageFactory } from './stages/stage';
import type { AuthServiceRecord, GatewayConfig, RateLimitServiceRecord } from './config/schema';
import type { ModuleHandler } from './module-handler';
import type { HeaderEdits } from './request/headers/header-edits';
import type { RedirectPlan } from './match/redirect';
import type { RouteTable } from './match/route-table';
import type { ClusterSet, Resolve, RouteUpstream } from './upstream';
import type { RuntimeSnapshot } from './snapshot';
import type { GatewayTls, HostRoute, TlsReadOptions } from './tls';

/** What every route has besides its target: edits of headers, and its CORS policy. */
export interface RouteExtras extends HeaderEdits {
  /** The CORS middleware of the route (its own policy, else the gateway-wide one), when there is one. */
  readonly cors: Middleware | undefined;
  /** Its `error_response_overrides`, else the Module's unless it bypasses them; null for none. */
  readonly errorOverrides: ErrorOverrides | null;
}

export interface InProcessTarget extends RouteExtras {
  readonly kind: 'in-process';
  readonly module: string;
  readonly handler: ModuleHandler;
}

export interface RemoteTarget extends RouteExtras {
  readonly kind: 'remote';
  /** Its address, cluster, and retry, idle and priority settings. */
  readonly upstream: RouteUpstream;
  readonly timeoutMs: number;
  /** The Host it is sent instead of its own `host:port` (`host_rewrite`). */
  readonly hostRewrite: string | undefined;
  /** The protocols (lower case) a request may upgrade its connection to (`allow_upgrade`); null for none. */
  readonly upgrades: ReadonlySet<string> | null;
  /** `grpc: true`: the call is proxied over HTTP/2 (see ./upstream/grpc). */
  readonly grpc: boolean;
}

/** A Mapping with `host_redirect: true`: answered with a redirect, no service called. */
export interface RedirectTarget extends RouteExtras {
  readonly kind: 'redirect';
  readonly redirect: RedirectPlan;
}

export type RouteTarget = InProcessTarget | RemoteTarget | RedirectTarget;

/** Whether a target proxies gRPC calls (`grpc: true`). */
export function isGrpcTarget(target: RouteTarget): boolean {
  return target.kind === 'remote' && target.grpc;
}

/** What a runtime is built with beyond its configuration. */
export interface RuntimeOptions {
  /** Draws in [0, 1) that choose among Mappings sharing a match (canary weights). Default `Math.random`. */
  readonly random?: () => number;
  /** The value of `source_cluster` rate-limit labels. Default `gatehouse`. */
  readonly sourceCluster?: string;
  /** How remote upstreams are reached. */
  readonly upstreams?: UpstreamOptions;
  /** How the certificates and keys of the TLS records are read. */
  readonly tls?: TlsReadOptions;
}

/** The factories of the two stages; by default those of `./auth-stage` and `./ratelimit-stage`. */
export interface StageFactories {
  auth: StageFactory<AuthServiceRecord>;
  rateLimit: StageFactory<RateLimitServiceRecord>;
}

/** How remote upstreams are reached, whatever the configuration. */
export interface UpstreamOptions {
  /** Kubernetes' cluster domain: `quote.shop` is looked up as `quote.shop.svc.<domain>` first. Default `cluster.local`. */
  clusterDomain?: string;
  /** Looks DNS names up; default node:dns's `lookup`. Tests give their own. */
  resolve?: Resolve;
  /** The clock of passive ejection and DNS refreshes, in ms; default `performance.now`. Tests give their own. */
  now?: () => number;
  /** The largest request body a retry sends again; a longer one is streamed and not retried. Default 1 MiB. */
  retryBufferBytes?: number;
}

/** One configuration, ready to serve: with the Module's `ip_allow` / `ip_deny` and its error overrides for answers no route gives. */
export interface Runtime extends ModulePolicies {
  readonly config: GatewayConfig;
  readonly table: RouteTable<RouteTarget>;
  readonly auth: Stage | null;
  readonly rateLimit: Stage | null;
  /** The gateway-wide CORS middleware, for paths that match no route; undefined when CORS is off. */
  readonly cors: Middleware | undefined;
  readonly clusters: ClusterSet;
  /** What the TLS records give: certificates by name, TLS to upstreams, the client-certificate policy. */
  readonly tls: GatewayTls;
  /** The Hosts a request's host chooses among, each with its routes; null when there is none (every host is served). */
  readonly hosts: readonly HostRoute<RouteTable<RouteTarget>>[] | null;
  /**
   * The header names (lower case) that Mappings match, label or edit, and
   * those the gateway writes or reads a method override from: no lookalike
   * spelling of one (`X_Api_Key`) reaches a backend (see `./request/headers/lookalike-headers`).
   */
  readonly ownedHeaders: readonly string[];
  readonly snapshot: RuntimeSnapshot;
  /** Requests being handled with it. */
  active: number;
  /** Replaced by a newer runtime: closed once idle. */
  retired: boolean;
  graceTimer?: NodeJS.Timeout;
  closing?: Promise<void>;
}
