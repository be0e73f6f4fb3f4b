/**
 * @module gatehouse/gatehouse
 * A whole Gatehouse: the config folder loaded, the built-in modules, the
 * gateway in front of them with its access log and metrics, the gRPC
 * rate-limit server beside it, config reload, and a graceful stop.
 */
import compose from 'koa-compose';
import Koa from 'koa';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDiagModule, describeGateway } from '../diag';
import {
  allowedUpgrades,
  ConfigError,
  createGateway,
  configProblem,
  createAuthStage,
  createRateLimitStage,
  dropClaimedUser,
  loadConfig,
  type ConfigProblem,
  type Gateway,
  type GatewayConfig,
  type GatewayEvents,
  type GatehouseModule,
  type ModuleRegistry,
} from '../gateway';
import { errorHandler, hostPort } from '../http';
import { createRateLimitGrpcServer, type RateLimitGrpcServer } from '../ratelimit';
import {
  accessLog,
  createLogger,
  createMetrics,
  createRouteCounters,
  logAppErrors,
  logUnexpectedError,
  metricsHandler,
  rejectedRequestLog,
  type Logger,
  type Metrics,
  type RouteCounters,
} from '../telemetry';
import type { BookingDatabase } from '../bookings';
import { openBookingStorage } from './bookings';
import { createBuiltinModules } from './builtins';
import { keepHostHeaders } from './host-headers';
import { listen, type RunningServer } from './http-server';
import { listenFailure } from './listen-failure';
import { checkFolderFiles, checkModuleFiles } from './module-files';
import { allReady, redisReadiness } from './readiness';
import { resolveOptions, type GatehouseOptions, type ResolvedOptions } from './options';
import { followTlsFiles, warnOfValidity } from './tls-files';
import { watchFolder, type FolderWatcher } from './watch';

export const METRICS_PATH = '/gateway/v0/metrics';

const VERSION: string = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')).version;

/** What a reload did. */
export type ReloadOutcome = { ok: true } | { ok: false; problems: string[] };

/** Where a started Gatehouse listens. */
export interface Listening {
  /** `http://host:port` or `https://host:port`. */
  url: string;
  port: number;
  grpcPort?: number;
}

/** A Gatehouse: mount `app` in another Koa app, or `start()` it. */
export interface Gatehouse {
  /** The root Koa app: access log, metrics, then the gateway. */
  readonly app: Koa;
  readonly gateway: Gateway;
  /** Every routable module by name, built-in and registered. */
  readonly modules: ModuleRegistry;
  /** The gRPC rate-limit server (not listening until `start()`); absent with `grpcPort: false`. */
  readonly grpcServer?: RateLimitGrpcServer;
  /** The bookings database (PostgreSQL or PGlite); absent with `bookingStore: 'memory'`. */
  readonly bookingDatabase?: BookingDatabase;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly options: ResolvedOptions;
  /**
   * Listens for HTTP(S) and gRPC and, unless `watch: false`, watches the config
   * folder. Rejects while started, and once stopped: create another Gatehouse.
   */
  start(): Promise<Listening>;
  /** Stops accepting, lets requests in flight finish, closes gRPC, Redis, the modules and the bookings database; a start under way first finishes. */
  stop(): Promise<void>;
  /**
   * Re-reads the config folder: the records and the files of the built-in
   * modules (users, limits, booking data) are all checked first, and a folder
   * with any problem changes nothing.
   */
  reload(): Promise<ReloadOutcome>;
}

function problemTexts(problems: readonly ConfigProblem[]): string[] {
  return problems.map((p) => p.text);
}

/** Whether a Mapping of `config` tunnels protocol upgrades: only then does the server hand them over (see ./upgrades). */
function tunnelsUpgrades(config: GatewayConfig): boolean {
  return config.mappings.some((m) => allowedUpgrades(m).length > 0);
}

/**
 * Builds a Gatehouse from a config folder. Rejects with a {@link ConfigError}
 * listing every problem when the folder's config cannot be served.
 */
export async function createGatehouse(input: GatehouseOptions = {}): Promise<Gatehouse> {
  const options = resolveOptions(input);
  const logger = options.logger ?? createLogger();
  const metrics = createMetrics();
  const counters: RouteCounters = createRouteCounters();
  const startedAt = new Date();

  const loaded = await loadConfig(options.configDir, { annotationDomain: options.annotationDomain });
  // Every file's problems in one report, the records' and the modules' alike.
  const files = await checkFolderFiles(options.configDir);
  if (!loaded.ok || files.problems.length > 0) throw new ConfigError([...(loaded.ok ? [] : loaded.problems), ...files.problems]);
  let config: GatewayConfig = loaded.config;
  let loadedAt = new Date();
  let lastReloadAt: Date | undefined;
  let configErrors: string[] = [];

  const storage = await openBookingStorage({ ...options, logger, metrics });
  const bookingDatabase = storage.database;
  let builtins: ReturnType<typeof createBuiltinModules>;
  try {
    builtins = createBuiltinModules({ configDir: options.configDir, redisUrl: options.redisUrl, bookingStores: storage.stores, logger });
  } catch (err) {
    await bookingDatabase?.close();
    throw err;
  }
  let usersText: string | undefined;
  const registry = new Map<string, GatehouseModule>();
  for (const m of builtins.modules) registry.set(m.name, m);

  // diag describes the gateway built below; it reads it only when a page is asked for.
  let gateway: Gateway | undefined;
  const diag = createDiagModule({
    snapshot: () => {
      const order = new Map(gateway!.snapshot().routes.map((r, i) => [r.name, i]));
      const mappings = [...config.mappings].sort((a, b) => (order.get(a.name) ?? 0) - (order.get(b.name) ?? 0));
      return describeGateway({
        version: VERSION,
        startedAt,
        config: { ...config, mappings },
        configDir: options.configDir,
        loadedAt,
        configErrors,
        lastReloadAt,
        modules: registry,
        counters,
      });
    },
  });
  registry.set(diag.name, diag);
  for (const m of options.modules) registry.set(m.name, m);

  const events: GatewayEvents = {
    authDecision: (outcome) => metrics.recordAuth(outcome),
    rateLimitDecision: (outcome) => metrics.recordRateLimit(outcome),
    upstreamError: (route, failure) => metrics.recordUpstreamError(route, failure),
  };
  const gatewayLogger = logger.child({ module: 'gateway' });
  const redis = builtins.redis;
  try {
    gateway = createGateway({
      config,
      modules: registry,
      bodyLimit: options.bodyLimit,
      trustProxy: options.trustProxy,
      errors: { onUnexpected: logUnexpectedError(logger) },
      events,
      stages: {
        auth: (record, modules, e) => createAuthStage(record, modules, { ...e, logger: gatewayLogger }),
        rateLimit: (record, modules, e) => createRateLimitStage(record, modules, { ...e, logger: gatewayLogger }),
      },
      readiness: allReady([
        redis && redisReadiness(redis.client, logger.child({ module: 'ratelimit' })),
        bookingDatabase && (() => bookingDatabase.ready()),
      ]),
    });
  } catch (err) {
    await Promise.all([...registry.values()].map((m) => m.close?.()));
    await bookingDatabase?.close();
    throw err;
  }
  const gw = gateway;

  const app = new Koa({ proxy: options.trustProxy });
  app.silent = true;
  // A module routed in process runs on this app's context, so the error its
  // own error handler answers with a bare 500 (a store that failed) is emitted
  // here: silent, the app would drop it, and the cause with it.
  const logUnexpected = logAppErrors(app, logger);
  // The gateway's error handler is not in front of this path: the metrics get one of their own.
  const serveMetrics = compose([errorHandler({ onUnexpected: logUnexpected }), metricsHandler(metrics)]);
  app.use(keepHostHeaders(app));
  app.use(accessLog({ logger, metrics, counters }));
  app.use((ctx, next) => {
    if (ctx.path !== METRICS_PATH) return next();
    // The gateway drops a client's X-Travel-User itself; this path never reaches it.
    dropClaimedUser(ctx.req);
    return serveMetrics(ctx, next);
  });
  // The gateway's middleware in this app's own chain: a nested compose would cost a step more per request.
  for (const middleware of gw.app.middleware) app.use(middleware);

  const grpcServer =
    options.grpcPort === false
      ? undefined
      : createRateLimitGrpcServer(builtins.rateLimit, { host: options.grpcHost, port: options.grpcPort });

  // The files of the built-in modules still in service (an embedding app may replace one).
  const moduleFiles = {
    configDir: options.configDir,
    users: builtins.auth !== undefined && registry.get(builtins.auth.name) === builtins.auth,
    limits: registry.get(builtins.rateLimit.name) === builtins.rateLimit,
    bookings: builtins.bookingData,
  };
  // The users file as checked above: a reload that finds it unchanged keeps the cache.
  if (moduleFiles.users) usersText = files.usersText;

  /**
   * Everything is checked before anything is applied: the records (and the
   * route table built from them), the users, the limits, the booking data.
   * Then the gateway switches to the new records, and the modules re-read
   * their files. Only a file changed again in between can fail a module's
   * reload after the records were applied; the watcher then reloads once more.
   */
  async function apply(): Promise<ConfigProblem[]> {
    const next = await loadConfig(options.configDir, { annotationDomain: options.annotationDomain });
    const checked = await checkModuleFiles(moduleFiles);
    const problems = [...(next.ok ? [] : next.problems), ...checked.problems];
    if (!next.ok || problems.length > 0) {
      gw.reject(problems);
      return problems;
    }
    try {
      gw.reconfigure(next.config);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return [...err.problems];
    }
    config = next.config;
    loadedAt = new Date();
    server?.acceptUpgrades(tunnelsUpgrades(config));
    for (const m of registry.values()) {
      // An unchanged users file keeps the auth service's cache of verified credentials.
      if (m === builtins.auth && checked.usersText === usersText) continue;
      try {
        await m.reload?.();
        if (m === builtins.auth) usersText = checked.usersText;
      } catch (err) {
        problems.push(configProblem({ kind: 'module', record: m.name }, (err as Error).message));
      }
    }
    return problems;
  }

  let reloading: Promise<ReloadOutcome> | undefined;
  async function reloadOnce(): Promise<ReloadOutcome> {
    lastReloadAt = new Date();
    const problems = problemTexts(await apply());
    configErrors = problems;
    metrics.recordConfigReload(problems.length === 0 ? 'success' : 'failure');
    if (problems.length) logger.error({ problems }, 'config reload refused; the previous config keeps serving');
    // What now serves, for whoever just edited the folder to see that the change is in (the diag page lists the routes).
    else logger.info({ configDir: options.configDir, sources: config.sources, routes: gw.snapshot().routes.length }, 'config reloaded');
    return problems.length === 0 ? { ok: true } : { ok: false, problems };
  }

  let server: RunningServer | undefined;
  let watcher: FolderWatcher | undefined;
  let tlsWatcher: FolderWatcher | undefined;
  let stopping: Promise<void> | undefined;
  let starting: Promise<Listening> | undefined;

  /** Listens for HTTP(S) and gRPC, and watches the folder unless told not to. */
  async function listenAll(): Promise<Listening> {
    // Set before the files are read, so that a change while they are read is seen.
    tlsWatcher = options.tls && options.watch ? followTlsFiles(options.tls, () => server?.reloadTls(), logger) : undefined;
    server = await listen(app.callback(), {
      host: options.host,
      port: options.port,
      tls: options.tls,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs,
      onRejected: rejectedRequestLog({ logger, metrics, counters }),
    }).catch((err: unknown) => {
      tlsWatcher?.close();
      throw err;
    });
    if (options.tls && server.certificate) warnOfValidity(logger, options.tls.cert, server.certificate);
    server.acceptUpgrades(tunnelsUpgrades(config));
    let grpcPort: number | undefined;
    try {
      grpcPort = grpcServer ? await grpcServer.start() : undefined;
    } catch (err) {
      await server.close(0);
      server = undefined;
      tlsWatcher?.close();
      throw listenFailure(err, 'gRPC', options.grpcHost, options.grpcPort as number);
    }
    if (options.watch) {
      watcher = watchFolder(options.configDir, options.reloadDebounceMs, () => {
        void gatehouse.reload().catch((err: unknown) => logger.error({ err }, 'config reload failed'));
      });
    }
    const url = `${server.protocol}://${hostPort(options.host, server.port)}`;
    logger.info({ url, grpcPort, configDir: options.configDir }, 'gatehouse listening');
    return { url, port: server.port, grpcPort };
  }

  const gatehouse: Gatehouse = {
    app,
    gateway: gw,
    modules: registry,
    grpcServer,
    bookingDatabase,
    logger,
    metrics,
    options,
    reload() {
      // Reloads never overlap: a change during one is picked up by the next.
      const run = (reloading ?? Promise.resolve()).then(reloadOnce, reloadOnce);
      reloading = run.finally(() => {
        if (reloading === tracked) reloading = undefined;
      });
      const tracked = reloading;
      return run;
    },
    start() {
      if (stopping) return Promise.reject(new Error('this Gatehouse is stopped: create another with createGatehouse()'));
      if (starting) return Promise.reject(new Error('this Gatehouse is already started'));
      // Set before the first await, so that a second start() or a stop() sees it at once.
      const run = listenAll();
      starting = run;
      // A start that failed (a port in use) may be tried again.
      run.catch(() => {
        if (starting === run) starting = undefined;
      });
      return run;
    },
    stop() {
      stopping ??= (async () => {
        // What a start under way opens is closed with the rest.
        await starting?.catch(() => undefined);
        watcher?.close();
        tlsWatcher?.close();
        await Promise.all([server?.close(options.shutdownGraceMs), grpcServer?.stop()]);
        await reloading?.catch(() => undefined);
        await gw.close();
        await Promise.all([...registry.values()].map((m) => m.close?.()));
        // Last: the booking modules answered their last request above.
        await bookingDatabase?.close();
        logger.info('gatehouse stopped');
      })();
      return stopping;
    },
  };
  return gatehouse;
}
