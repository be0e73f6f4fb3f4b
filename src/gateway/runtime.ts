/**
 * @module gateway/runtime
 * Builds everything a request uses from one configuration (./types'
 * `Runtime`): the route table with each route's target (an in-process
 * module, a remote upstream or a redirect) and CORS policy, the auth and
 * rate-limit stages, the upstream clusters, and a read-only picture of it
 * all for diagnostics. A configuration that cannot be built is refused
 * whole, with every problem listed. ./runtime-disposal closes one.
 */
import type { Middleware } from 'koa';
import { modulePolicies, routeErrorOverrides } from './module-policies';
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
import { compileHeaderEdits } from './request/headers/header-edits';
import { groupProblemsSteps } from './match/canary';
import { prepareMatchSteps, type PreparedMatch } from './match/prepare';
import type { RedirectPlan } from './match/redirect';
import { createPatternCompiler } from './match/regex';
import { shadowProblemsSteps } from './match/shadow';
import { compileRoutes, retargetRoutes, RouteTable } from './match/route-table';
import { runAtOnce, type Steps } from './slices';
import { errorText } from '../files';
import { ClusterSet, DEFAULT_CLUSTER_DOMAIN, systemResolve, type ServiceAddress } from './upstream';
import { serviceTarget } from './upstream/endpoints/targets';
import { describeRoutesSteps } from './snapshot';
import { addressWithTls, hostTables, resolveTls, type GatewayTls } from './tls';
import { closing } from './runtime-disposal';
import type { RouteExtras, RouteTarget, Runtime, RuntimeOptions, StageFactories } from './types';

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
