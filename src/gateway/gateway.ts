/**
 * @module gateway/gateway
 * The gateway as a Koa app: the request's own checks, path normalisation,
 * the gateway's own paths, route match and CORS, then what a routed request
 * runs (./routed). What a request uses lives in one runtime object that
 * `reconfigure` swaps whole; a request keeps the runtime it started with.
 */
import Koa, { type Context, type Middleware } from 'koa';
import {
  basePath,
  errorResponder,
  HttpError,
  leanKoa,
  ORIGINAL_PATH,
  setPath,
  type ErrorHandlerOptions,
} from '../http';
import { createAuthStage } from './stages/auth-stage';
import { dropClaimedUser, dropPathOverrides } from './request/headers/claimed-user';
import { dropProxyOwnedHeaders } from './request/headers/proxy-owned';
import { DEFAULT_BODY_LIMIT, declaredTooLarge, guardStreamedBody, hasUnsizedBody } from './request/body-limit';
import { ConfigError, type ConfigProblem } from './config/problems';
import type { GatewayConfig } from './config/schema';
import { NO_EVENTS, type GatewayEvents } from './events';
import { dropNominatedHeaders } from './request/headers/hop-by-hop';
import { dropLookalikes } from './request/headers/lookalike-headers';
import { overriddenMethods } from './request/override/method-override';
import { bodyMayOverride, refuseBodyOverride } from './request/override/body-override';
import type { ModuleRegistry } from './module';
import { OWN_PREFIX, ownPaths } from './own-paths';
import { normalisePath, unsafeEscapeError, withoutParameters } from './request/path';
import { createRateLimitStage } from './stages/ratelimit-stage';
import { admitRequest } from './request/request-target';
import type { Route } from './match/route-table';
import { createRouted } from './routed';
import {
  buildRuntime,
  buildRuntimeSteps,
  disposeRuntime,
  retireRuntime,
  type RouteTarget,
  type Runtime,
  type StageFactories,
  type UpstreamOptions,
} from './runtime';
import { runInSlices } from './slices';
import { deepFreeze, type GatewaySnapshot, type RejectedConfig } from './snapshot';

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
  /**
   * Asked by `/gateway/v0/check_ready` once a configuration is loaded:
   * resolves when the gateway's dependencies (Redis...) can serve, rejects
   * with the reason when they cannot (the check then answers 503 with it).
   */
  readiness?: () => Promise<void> | void;
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
  /** Closes the stages and upstream pools. The modules are the caller's. */
  close(): Promise<void>;
}

/** A configuration built by {@link Gateway.prepare}, not yet served. */
export interface PreparedConfig {
  readonly config: GatewayConfig;
  /** Closes what it opened, when it is not going to be served. */
  discard(): Promise<void>;
}

/** What a preflight asks to send, as a route's `method` is spelled. */
function requestedMethod(ctx: Context): string {
  return String(ctx.req.headers['access-control-request-method']).toUpperCase();
}

async function notFound(): Promise<never> {
  throw HttpError.of('NOT_FOUND');
}

function nothing(): Promise<void> {
  return Promise.resolve();
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
  const runtimeOptions = { random: options.random, sourceCluster: options.sourceCluster, upstreams };
  let current: Runtime | null = options.config
    ? buildRuntime(options.config, modules, stages, events, runtimeOptions)
    : null;
  let rejected: RejectedConfig | undefined;
  let closed = false;
  // Replaced runtimes still finishing requests, so that close() can close them too.
  const retiring = new Set<Runtime>();
  const answerOwnPath = ownPaths(() => current, options.readiness);
  const pass = createRouted({ bodyLimit, errors, events, upstreams });

  /** Answers a CORS preflight with `cors`, without auth: browsers send no credentials with one. */
  function answerPreflight(
    ctx: Context,
    cors: Middleware,
    route: Route<RouteTarget> | undefined,
    path: string,
  ): Promise<void> {
    if (route) ctx.state.mapping = route.mapping;
    ctx.state[ORIGINAL_PATH] = ctx.originalUrl === ctx.url ? path : basePath(ctx) + path;
    return cors(ctx, nothing) as Promise<void>;
  }

  /**
   * The gateway's one middleware: routes the request, and answers every
   * error on its way, and an error status left without a body, with the
   * error body, as the error handler in front of it would, one async step less.
   */
  async function handle(ctx: Context): Promise<void> {
    try {
      // First of all: without an AuthService, on a path no route matches, or on
      // the gateway's own paths, a client's X-Travel-User would otherwise reach
      // a backend or the access log as if the auth service had named that user.
      const req = ctx.req;
      dropClaimedUser(req);
      dropPathOverrides(req);
      dropProxyOwnedHeaders(req, ctx.request.app.proxy);
      const host = admitRequest(ctx);
      // Read from the request itself: ctx's getters only pass on to it.
      const request = ctx.request;
      const method = request.method;
      const seen = request.path;
      const path = normalisePath(seen);
      if (path.startsWith(OWN_PREFIX) && (await answerOwnPath(ctx, path))) return errors.fillEmpty(ctx);
      const rt = current;
      if (rt === null) throw HttpError.of('NO_CONFIGURATION');
      const headers = req.headers;
      dropNominatedHeaders(headers);
      // Before matching: a backend reads `X_Api_Key` as the `X-Api-Key` a label or a Mapping's `headers` never saw.
      dropLookalikes(req, rt.ownedHeaders);
      // A preflight is routed by the method it asks about, so that a route limited to that method answers it.
      const preflight =
        method === 'OPTIONS' && headers.origin !== undefined && headers['access-control-request-method'] !== undefined;
      const plain = withoutParameters(path);
      // Answered by the CORS policy, a preflight reaches no backend to act on an override.
      // The query as it is forwarded: what follows a `#` reaches no backend.
      const query = request.querystring;
      const overrides = overriddenMethods(headers, query);
      let route = rt.table.matchAlike(
        path,
        plain,
        preflight ? requestedMethod(ctx) : method,
        headers,
        host,
        preflight ? undefined : overrides,
        query,
      );
      let cors = route === undefined ? rt.cors : route.target.cors;
      if (preflight) {
        if (cors !== undefined) {
          await answerPreflight(ctx, cors, route, path);
          return errors.fillEmpty(ctx);
        }
        // No policy for it: an OPTIONS request like any other.
        route = rt.table.matchAlike(path, plain, method, headers, host, overrides, query);
        cors = route === undefined ? rt.cors : route.target.cors;
      }
      if (route === undefined) {
        if (cors === undefined) throw HttpError.of('NOT_FOUND');
        // The gateway-wide policy makes the 404 readable cross-origin.
        await cors(ctx, notFound);
        return errors.fillEmpty(ctx);
      }
      if (!route.mapping.allow_unsafe_path_escapes) {
        const unsafe = unsafeEscapeError(path);
        if (unsafe !== undefined) throw HttpError.of(unsafe);
      }
      const tooLarge = declaredTooLarge(req, bodyLimit);
      const guard = !tooLarge && hasUnsizedBody(req) ? guardStreamedBody(req, bodyLimit) : null;

      const state = ctx.state;
      state.mapping = route.mapping;
      state[ORIGINAL_PATH] = ctx.originalUrl === req.url ? path : basePath(ctx) + path;
      if (path !== seen) setPath(ctx, path);
      rt.active++;
      try {
        // After the guard: a body read for its override is held to the body limit as any other.
        if (!tooLarge && !preflight && bodyMayOverride(method, headers))
          await refuseBodyOverride(req, rt.table, { path, plain, method, headers, host, query }, bodyLimit);
        if (cors === undefined) await pass(ctx, rt, route, path, guard, tooLarge);
        else await cors(ctx, () => pass(ctx, rt, route, path, guard, tooLarge));
      } finally {
        if (--rt.active === 0 && rt.retired) {
          retiring.delete(rt);
          void disposeRuntime(rt);
        }
        if (path !== seen) setPath(ctx, seen);
      }
      errors.fillEmpty(ctx);
    } catch (err) {
      errors.answer(ctx, err);
    }
  }

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
