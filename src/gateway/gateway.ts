/**
 * @module gateway/gateway
 * The gateway as a Koa app whose one middleware admits and routes each
 * request (./admit, ./routed), and the handle that changes what it serves.
 * What a request uses lives in one runtime object that `reconfigure` swaps
 * whole; a request keeps the runtime it started with.
 */
import Koa from 'koa';
import { errorResponder, leanKoa, type ErrorHandlerOptions } from '../http';
import { createAdmission } from './admit';
import { createAuthStage } from './stages/auth-stage';
import { DEFAULT_BODY_LIMIT } from './request/body-limit';
import { ConfigError, type ConfigProblem } from './config/problems';
import type { GatewayConfig } from './config/schema';
import { NO_EVENTS, type GatewayEvents } from './events';
import type { ModuleRegistry } from './module';
import { ownPaths, type ReadyFields } from './own-paths';
import { createRateLimitStage } from './stages/ratelimit-stage';
import { createRouted } from './routed';
import { buildRuntime, buildRuntimeSteps } from './runtime';
import { disposeRuntime, retireRuntime } from './runtime-disposal';
import type { Runtime, StageFactories, UpstreamOptions } from './types';
import { runInSlices } from './slices';
import { deepFreeze, type GatewaySnapshot, type RejectedConfig } from './snapshot';
import type { GatewayTls, TlsReadOptions } from './tls';
import type { GatewayTracing } from '../tracing';

export interface GatewayOptions {
  /** The configuration to serve; without one, routed paths answer 503 until {@link Gateway.reconfigure}. */
  config?: GatewayConfig;
  /** The built-in modules a record's `service` may name. Default: none. */
  modules?: ModuleRegistry;
  /** Largest request body, in bytes. Default 1 MiB. */
  bodyLimit?: number;
  /** Trust `X-Forwarded-*` from the client (the gateway sits behind another proxy). Default false. */
  trustProxy?: boolean;
  /** The value of `source_cluster` rate-limit labels, as Envoy's `--service-cluster`. Default `gatehouse`. */
  sourceCluster?: string;
  /** Draws in [0, 1) that choose among Mappings sharing a match by weight. Default `Math.random`. */
  random?: () => number;
  /** How long a replaced configuration may finish its requests before its pools are closed, in ms. Default 30 s. */
  drainMs?: number;
  /** Builders of the auth and rate-limit stages; by default the project's own. */
  stages?: Partial<StageFactories>;
  /** Options of the error handler in front of everything (`infoUrl`, `onUnexpected`, formatters). */
  errors?: ErrorHandlerOptions;
  /** Receives the decisions of the stages and the failures of upstreams (for metrics). Default: none. */
  events?: GatewayEvents;
  /** How remote upstreams are reached: the cluster domain of their names, the retry buffer. */
  upstreams?: UpstreamOptions;
  /** How certificates are read (the clock their expiry is held against, the largest file), and the HTTPS port redirects go to. */
  tls?: TlsReadOptions & { httpsPort?: () => number | undefined };
  /**
   * Asked by `/gateway/v0/check_ready` once a configuration is loaded:
   * resolves when the gateway's dependencies (Redis...) can serve, rejects
   * with the reason when they cannot (the check then answers 503 with it);
   * what it resolves is added to the answer.
   */
  readiness?: () => Promise<ReadyFields | void> | ReadyFields | void;
  /**
   * Tracing, read once a request: each request's SERVER span, and its context
   * sent on to the stages' services, the modules and the upstreams. Default off.
   */
  tracing?: GatewayTracing;
}

/** A gateway: its Koa app and the handle to change what it serves. */
export interface Gateway {
  /** Serve it, or mount it in another Koa app. */
  readonly app: Koa;
  /**
   * Serves `config` (or a configuration built by {@link prepare}) from now
   * on. Throws a {@link ConfigError} and changes nothing when it cannot be
   * served; requests under way finish with the configuration they started with.
   */
  reconfigure(config: GatewayConfig | PreparedConfig): void;
  /**
   * Builds what `config` needs to be served (the route table, the stages,
   * the upstream pools) a few milliseconds at a time, so that requests are
   * answered meanwhile, without serving it yet: hand it to
   * {@link reconfigure}, or discard it. Rejects with a {@link ConfigError}
   * when it cannot be served, which the snapshot then shows as refused.
   */
  prepare(config: GatewayConfig): Promise<PreparedConfig>;
  /** Records a configuration that was refused before it got here (it did not load), for diagnostics. */
  reject(problems: readonly ConfigProblem[]): void;
  /** What it serves now, read-only. */
  snapshot(): GatewaySnapshot;
  /** What the TLS records of the configuration served now give (certificates by name, their files); undefined before one is. */
  tls(): GatewayTls | undefined;
  /** The upstream clusters of what it serves now: their endpoints, and those ejected for failing. */
  upstreams(): UpstreamHealth[];
  /** Closes the stages and upstream pools. The modules are the caller's. */
  close(): Promise<void>;
}

/** An upstream cluster: how many endpoints it has (its names resolved so far), and those ejected now. */
export interface UpstreamHealth {
  readonly cluster: string;
  readonly endpoints: number;
  /** `address:port` of each endpoint ejected for failing in a row. */
  readonly ejected: readonly string[];
}

/** A configuration built by {@link Gateway.prepare}, not yet served. */
export interface PreparedConfig {
  readonly config: GatewayConfig;
  /** Closes what it opened, when it is not going to be served. */
  discard(): Promise<void>;
}

/** Builds a gateway. Throws a {@link ConfigError} when `config` cannot be served. */
export function createGateway(options: GatewayOptions = {}): Gateway {
  const modules: ModuleRegistry = options.modules ?? new Map();
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const events = options.events ?? NO_EVENTS;
  const errors = errorResponder(options.errors);
  const drainMs = options.drainMs ?? 30_000;
  const stages: StageFactories = {
    auth: options.stages?.auth ?? createAuthStage,
    rateLimit: options.stages?.rateLimit ?? createRateLimitStage,
  };
  const upstreams = options.upstreams ?? {};
  const runtimeOptions = { random: options.random, sourceCluster: options.sourceCluster, upstreams, tls: options.tls };
  let current: Runtime | null = options.config
    ? buildRuntime(options.config, modules, stages, events, runtimeOptions)
    : null;
  let rejected: RejectedConfig | undefined;
  let closed = false;
  // Replaced runtimes still finishing requests, so that close() can close them too.
  const retiring = new Set<Runtime>();
  const handle = createAdmission({
    runtime: () => current,
    ownPath: ownPaths(() => current, options.readiness),
    bodyLimit,
    errors,
    routed: createRouted({ bodyLimit, errors, events, upstreams }),
    tracing: options.tracing,
    released(rt) {
      retiring.delete(rt);
      void disposeRuntime(rt);
    },
    httpsPort: options.tls?.httpsPort,
  });

  // One trusted hop: ctx.ip is the address the proxy wrote last, as trustedClientAddress reads it.
  const app = leanKoa(new Koa({ proxy: options.trustProxy ?? false, maxIpsCount: 1 }));
  app.silent = true;
  app.use(handle);

  /** The runtimes this gateway prepared that are neither served nor discarded yet. */
  const prepared = new WeakMap<PreparedConfig, Runtime>();
  const refused = (err: unknown) => {
    if (err instanceof ConfigError)
      rejected = deepFreeze({ at: new Date().toISOString(), problems: [...err.problems] });
    return err;
  };

  return {
    app,
    async prepare(config) {
      if (closed) throw new Error('the gateway is closed');
      let runtime: Runtime;
      try {
        runtime = await runInSlices(buildRuntimeSteps(config, modules, stages, events, runtimeOptions));
      } catch (err) {
        throw refused(err);
      }
      const handle: PreparedConfig = {
        config,
        discard: () => {
          if (!prepared.delete(handle)) return Promise.resolve();
          return disposeRuntime(runtime);
        },
      };
      prepared.set(handle, runtime);
      return handle;
    },
    reconfigure(config) {
      if (closed) throw new Error('the gateway is closed');
      let next: Runtime;
      if ('discard' in config) {
        const built = prepared.get(config);
        if (built === undefined)
          throw new Error('this configuration was not prepared by this gateway, or was served or discarded already');
        prepared.delete(config);
        next = built;
      } else {
        try {
          next = buildRuntime(config, modules, stages, events, runtimeOptions);
        } catch (err) {
          throw refused(err);
        }
      }
      const previous = current;
      current = next;
      rejected = undefined;
      if (previous) {
        retireRuntime(previous, drainMs);
        if (previous.active > 0) retiring.add(previous);
      }
    },
    tls: () => current?.tls,
    reject(problems) {
      rejected = deepFreeze({ at: new Date().toISOString(), problems: [...problems] });
    },
    snapshot() {
      const served = current?.snapshot;
      return {
        ready: current !== null,
        ...served,
        routes: served?.routes ?? [],
        sources: served?.sources ?? [],
        ...(rejected ? { rejected } : {}),
      };
    },
    upstreams() {
      return (current?.clusters.all() ?? []).map((c) => ({ cluster: c.name, ...c.health() }));
    },
    async close() {
      closed = true;
      const runtimes = [...retiring];
      if (current) runtimes.push(current);
      current = null;
      retiring.clear();
      await Promise.all(runtimes.map((rt) => disposeRuntime(rt)));
    },
  };
}
