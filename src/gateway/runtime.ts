/**
 * @module gateway/runtime
 * Everything a request uses, built from one configuration: the route table
 * with each route's target (an in-process module, a remote upstream or a
 * redirect) and CORS policy, the auth and rate-limit stages, the upstream
 * clusters, and a read-only picture of it all for diagnostics. A configuration that cannot be
 * built is refused whole, with every problem listed.
 */
import type { Middleware } from 'koa';
import type { ErrorOverrides } from './error-overrides';
import { modulePolicies, routeErrorOverrides, type ModulePolicies } from './module-policies';
import { ownedHeaders } from './request/headers/owned-headers';
import { createCorsPolicies, type CorsPolicies } from '../cors';
import type { GatewayEvents } from './events';
import type { ModuleRegistry, GatehouseModule } from './module';
import type { Stage, StageFactory } from './stages/stage';
import type { Route } from './match/route';
import {
  allowedUpgrades,
  type AuthServiceRecord,
  type GatewayConfig,
  type MappingRecord,
  type RateLimitServiceRecord,
} from './config/schema';
import { ConfigError, configProblem, type ConfigProblem } from './config/problems';
import { moduleHandler, type ModuleHandler } from './module-handler';
import { compileHeaderEdits, type HeaderEdits } from './request/headers/header-edits';
import { groupProblemsSteps } from './match/canary';
import { prepareMatchSteps, type PreparedMatch } from './match/prepare';
import type { RedirectPlan } from './match/redirect';
import { createPatternCompiler } from './match/regex';
import { shadowProblemsSteps } from './match/shadow';
import { compileRoutes, retargetRoutes, RouteTable } from './match/route-table';
import { runAtOnce, type Steps } from './slices';
import { errorText } from '../files';
import {
  ClusterSet,
  DEFAULT_CLUSTER_DOMAIN,
  systemResolve,
  type Resolve,
  type RouteUpstream,
  type ServiceAddress,
} from './upstream';
import { serviceTarget } from './upstream/endpoints/targets';
import { describeRoutesSteps, type RuntimeSnapshot } from './snapshot';
import { addressWithTls, hostTables, resolveTls, type GatewayTls, type HostRoute, type TlsReadOptions } from './tls';

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

/** A Mapping checked and prepared, before its target is made. */
type Pending = { mapping: MappingRecord; prefix: string; edits: RouteExtras; match: PreparedMatch } & (
  | { module: GatehouseModule & { app: NonNullable<GatehouseModule['app']> } }
  | { address: ServiceAddress }
  | { redirect: RedirectPlan }
);

/**
 * Builds the runtime of a configuration. Throws a {@link ConfigError} listing
 * every problem (a prefix that is no path, a service that is neither a
 * registered module nor an address, a stage that cannot be built); nothing is
 * left open when it throws.
 */
export function buildRuntime(
  config: GatewayConfig,
  modules: ModuleRegistry,
  stages: StageFactories,
  events: GatewayEvents = {},
  options: RuntimeOptions = {},
): Runtime {
  return runAtOnce(buildRuntimeSteps(config, modules, stages, events, options));
}

/**
 * {@link buildRuntime}, a step a Mapping at each of its stages (see ./slices):
 * its match prepared (patterns compiled), its canary group and shadowing
 * checked, its route compiled and ordered, its target (and cluster) made,
 * its route described.
 */
export function* buildRuntimeSteps(
  config: GatewayConfig,
  modules: ModuleRegistry,
  stages: StageFactories,
  events: GatewayEvents = {},
  options: RuntimeOptions = {},
): Steps<Runtime> {
  const problems: ConfigProblem[] = [];
  const upstreamOptions = options.upstreams ?? {};
  const names = { clusterDomain: upstreamOptions.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN };
  // Modules without an HTTP app are named so too: a Mapping to one is told so, not sent to DNS.
  const moduleNames = new Set(modules.keys());
  const sourceOf = (record: object) => config.recordSources?.get(record as MappingRecord);
  let policies: CorsPolicies | undefined;
  let globalCors: Middleware | undefined;
  try {
    policies = createCorsPolicies(config.module?.config.cors);
    globalCors = policies.forMapping(undefined);
  } catch (err) {
    const m = config.module!;
    problems.push(
      configProblem({ source: sourceOf(m), kind: m.kind, record: m.name, path: 'config.cors' }, errorText(err)),
    );
  }
  // One a configuration: a pattern written in many Mappings is compiled once, and all are held to one total.
  const patterns = createPatternCompiler({ maxSize: config.module?.config.regex_max_size });
  const pending: Pending[] = [];
  const moduleWide = modulePolicies(config);

  for (const mapping of config.mappings) {
    yield;
    const at = { source: sourceOf(mapping), kind: 'Mapping', record: mapping.name };
    const problem = (path: string, message: string) => problems.push(configProblem({ ...at, path }, message));
    const match = yield* prepareMatchSteps(mapping, patterns);
    for (const p of match.problems) problem(p.path, p.message);
    const prefix = match.prefix;
    let cors: Middleware | undefined;
    try {
      cors = policies?.forMapping(mapping);
    } catch (err) {
      problem('cors', errorText(err));
    }
    const edits: RouteExtras = {
      ...compileHeaderEdits(mapping),
      cors,
      errorOverrides: routeErrorOverrides(mapping, moduleWide),
    };
    if (match.redirect !== null) {
      pending.push({ mapping, prefix, edits, match, redirect: match.redirect });
      continue;
    }
    const target = serviceTarget(mapping, moduleNames, names, at.source?.fromModule);
    if (target.kind === 'problem') {
      problem(target.path, target.message);
      continue;
    }
    if (target.kind === 'remote') {
      pending.push({ mapping, prefix, edits, match, address: addressWithTls(mapping, target.address) });
      continue;
    }
    if (mapping.tls !== undefined)
      problem('tls', `applies to remote upstreams only: module '${mapping.service}' is called in process`);
    const module = modules.get(target.name)!;
    // A module builds its links from the Host; the client's is the one its links must name.
    if (mapping.host_rewrite !== undefined) {
      problem(
        'host_rewrite',
        `applies to remote upstreams only: module '${mapping.service}' is called in process and builds its links from the client's Host`,
      );
    }
    if (allowedUpgrades(mapping).length > 0) {
      problem(
        mapping.allow_upgrade ? 'allow_upgrade' : 'use_websocket',
        `applies to remote upstreams only: module '${mapping.service}' is called in process and switches no connection to another protocol`,
      );
    }
    if (mapping.grpc === true)
      problem(
        'grpc',
        `applies to remote upstreams only: module '${mapping.service}' is called in process and serves no gRPC`,
      );
    if (module.app)
      pending.push({
        mapping,
        prefix,
        edits,
        match,
        module: module as GatehouseModule & { app: NonNullable<GatehouseModule['app']> },
      });
    else problem('service', `module '${mapping.service}' has no HTTP app to route to`);
  }

  for (const p of yield* groupProblemsSteps(pending)) {
    problems.push(
      configProblem({ source: sourceOf(p.mapping), kind: 'Mapping', record: p.mapping.name, path: p.path }, p.message),
    );
  }
  // In match order, grouped, before any pool is opened; given their targets once the configuration is to be served.
  let ordered: Route<Pending>[] = [];
  if (problems.length === 0) {
    ordered = yield* compileRoutes(
      pending.map((p) => ({ mapping: p.mapping, prefix: p.prefix, target: p, patterns: p.match.patterns })),
    );
    // A pattern that bypasses auth over a prefix that needs it.
    for (const p of yield* shadowProblemsSteps(ordered)) {
      problems.push(
        configProblem(
          { source: sourceOf(p.route.mapping), kind: 'Mapping', record: p.route.mapping.name, path: 'prefix' },
          p.message,
        ),
      );
    }
  }

  const tlsResolved = resolveTls(config, sourceOf, options.tls);
  problems.push(...tlsResolved.problems);
  const tls = tlsResolved.tls;
  let auth: Stage | null = null;
  let rateLimit: Stage | null = null;
  // A stage that cannot be built is a problem of the field naming its service.
  const buildStage = <R extends AuthServiceRecord | RateLimitServiceRecord>(
    record: R,
    factory: StageFactory<R>,
    path: string,
  ): Stage | null => {
    try {
      const upstreamTls = typeof record.tls === 'string' ? tls.upstreams.get(record.tls) : undefined;
      return factory(record, modules, {
        ...events,
        sourceCluster: options.sourceCluster,
        suppressEnvoyHeaders: config.module?.config.suppress_envoy_headers === true,
        upstreamTls,
      });
    } catch (err) {
      problems.push(
        configProblem({ source: sourceOf(record), kind: record.kind, record: record.name, path }, errorText(err)),
      );
      return null;
    }
  };
  if (config.authService) auth = buildStage(config.authService, stages.auth, 'auth_service');
  if (config.rateLimitService) rateLimit = buildStage(config.rateLimitService, stages.rateLimit, 'service');

  if (problems.length > 0) {
    for (const stage of [auth, rateLimit]) void closing(() => stage?.close?.());
    throw new ConfigError(problems);
  }

  // Pools are opened only for a configuration that is going to be served.
  const clusters = new ClusterSet(
    {
      resolve: upstreamOptions.resolve ?? systemResolve,
      now: upstreamOptions.now ?? (() => performance.now()),
      events: {
        overflow: (cluster, limit) => events.upstreamOverflow?.(cluster, limit),
        ejected: (cluster, endpoint) => events.upstreamEjection?.(cluster, endpoint),
      },
    },
    names,
  );
  try {
    // Made in config order, as clusters are named in the order they are made.
    const targetOf = routeTargets(clusters, tls);
    const targets: RouteTarget[] = [];
    for (const p of pending) {
      targets.push(targetOf(p));
      yield;
    }
    const routes = yield* retargetRoutes(ordered, (route) => targets[route.index]);
    const table = new RouteTable<RouteTarget>([], { random: options.random, compiled: routes });
    return {
      config,
      table,
      auth,
      rateLimit,
      cors: globalCors,
      ...moduleWide,
      clusters,
      tls,
      hosts: hostTables(tls, routes, options.random),
      ownedHeaders: yield* ownedHeaders(config.mappings),
      snapshot: yield* describeRoutesSteps(config, table),
      active: 0,
      retired: false,
    };
  } catch (err) {
    // Nothing is left open: what was opened for a configuration that is not served is closed.
    for (const stage of [auth, rateLimit]) void closing(() => stage?.close?.());
    for (const cluster of clusters.all()) void closing(() => cluster.close(true));
    throw err;
  }
}

/** Makes the target of each prepared Mapping; a remote one gets its cluster from `clusters`, with its TLSContext's TLS. */
function routeTargets(clusters: ClusterSet, tls: GatewayTls): (p: Pending) => RouteTarget {
  const handlers = new Map<GatehouseModule, ModuleHandler>();
  return (p) => {
    if ('redirect' in p) return { kind: 'redirect', redirect: p.redirect, ...p.edits };
    if ('module' in p) {
      let handler = handlers.get(p.module);
      if (!handler) handlers.set(p.module, (handler = moduleHandler(p.module)));
      return { kind: 'in-process', module: p.module.name, handler, ...p.edits };
    }
    const upgrades = allowedUpgrades(p.mapping);
    return {
      kind: 'remote',
      // Mappings of one service with the same settings share its cluster; each keeps its own base path.
      upstream: clusters.route(
        p.mapping,
        p.address,
        p.mapping.tls === undefined ? undefined : tls.upstreams.get(p.mapping.tls),
      ),
      timeoutMs: p.mapping.timeout_ms,
      hostRewrite: p.mapping.host_rewrite,
      upgrades: upgrades.length > 0 ? new Set(upgrades) : null,
      grpc: p.mapping.grpc === true,
      ...p.edits,
    };
  };
}

/** What `close` returns, as a promise that never rejects, even when `close` throws at once. */
function closing(close: () => unknown): Promise<void> {
  return Promise.resolve()
    .then(close)
    .then(
      () => undefined,
      () => undefined,
    );
}

/**
 * Closes a runtime's stages and clusters. Graceful by default (pools finish
 * what they carry); `force` destroys the pools' connections. Runs once.
 */
export function disposeRuntime(runtime: Runtime, force = false): Promise<void> {
  if (runtime.graceTimer) clearTimeout(runtime.graceTimer);
  const clusters = runtime.clusters.all();
  // Closed one by one, each as a promise: a close that throws at once (in a timer, at the end of a request) must not escape.
  if (!runtime.closing) {
    runtime.closing = Promise.all([
      ...[runtime.auth, runtime.rateLimit].map((stage) => closing(() => stage?.close?.())),
      ...clusters.map((cluster) => closing(() => cluster.close(force))),
    ]).then(() => undefined);
  } else if (force) {
    return Promise.all(clusters.map((cluster) => closing(() => cluster.close(true)))).then(() => undefined);
  }
  return runtime.closing;
}

/**
 * Marks a runtime replaced: it is closed as soon as no request uses it, or
 * after `graceMs` at the latest.
 */
export function retireRuntime(runtime: Runtime, graceMs: number): void {
  runtime.retired = true;
  if (runtime.active === 0) {
    void disposeRuntime(runtime);
    return;
  }
  runtime.graceTimer = setTimeout(() => void disposeRuntime(runtime, true), graceMs);
  runtime.graceTimer.unref();
}
