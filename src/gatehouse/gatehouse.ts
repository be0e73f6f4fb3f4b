/**
 * @module gatehouse/gatehouse
 * A whole Gatehouse: the config folder loaded, the built-in modules, the
 * gateway in front of them with its access log and metrics, the gRPC
 * rate-limit server beside it, config reload, and a graceful stop.
 */
import compose from 'koa-compose';
import Koa, { type Context } from 'koa';
import {
  allowedUpgrades,
  ConfigError,
  configWarnings,
  createGateway,
  createAuthStage,
  createRateLimitStage,
  dropClaimedUser,
  type Gateway,
  type GatewayConfig,
  type GatewayEvents,
  type GatehouseModule,
} from '../gateway';
import { errorHandler, hostPort, leanKoa } from '../http';
import { createRateLimitGrpcServer } from '../ratelimit';
import {
  accessLog,
  createLogger,
  createMetrics,
  createRouteCounters,
  logAppErrors,
  logUnexpectedError,
  metricsHandler,
  rejectedRequestLog,
  type RouteCounters,
} from '../telemetry';
import { describeStorage, openBookingStorage } from './bookings';
import { createBuiltinModules } from './builtins';
import { createGatehouseDiag } from './diag';
import { enterFromHost } from './serving/mounted';
import { listen, type RunningServer } from './serving/http-server';
import { listenFailure } from './serving/listen-failure';
import { drainFor } from './serving/drain';
import { loadFolder, type FolderWants, type LoadFolderOptions } from './folder';
import { allReady, redisReadiness } from './readiness';
import { createReloader, type Reloader } from './folder/reload';
import { describeRedisUrl, resolveOptions, type GatehouseOptions } from './options';
import { dependencyStatus } from './status';
import { followTlsFiles, readTlsFiles, warnOfValidity } from './serving/tls-files';
import { watchFolder, type FolderWatcher } from './folder/watch';
import type { Gatehouse, Listening } from './types';
import { packageVersion } from './version';
import { createTracing, registerTraceMetrics, type Tracing } from '../tracing';
import { describeTracing, tracingSettings } from './tracing';

export const METRICS_PATH = '/gateway/v0/metrics';

const VERSION = packageVersion();

export type { ReloadOutcome } from './folder/reload';
export type { Gatehouse, Listening } from './types';

/** What a start reads: the records, the limits, and the users file and booking data when the folder has them. */
const START_WANTS: FolderWants = { records: true, limits: true, users: 'present', bookings: 'present' };

/** Whether a Mapping of `config` tunnels protocol upgrades: only then does the server hand them over (see ./serving/upgrades). */
function tunnelsUpgrades(config: GatewayConfig): boolean {
  return config.mappings.some((m) => allowedUpgrades(m).length > 0);
}

/**
 * Builds a Gatehouse from a config folder. Rejects with a {@link ConfigError}
 * listing every problem when the folder's config cannot be served.
 */
export async function createGatehouse(input: GatehouseOptions = {}): Promise<Gatehouse> {
  const options = resolveOptions(input);
  // Read now as well as at start(): a file that cannot be served is said before a first start makes and seeds its database.
  if (options.tls) readTlsFiles(options.tls, options.fileSizeLimit);
  const logger = options.logger ?? createLogger({ level: options.logLevel });
  const metrics = createMetrics({ logger });
  const counters: RouteCounters = createRouteCounters();
  const startedAt = new Date();

  const folderOptions: LoadFolderOptions = {
    source: options.configSource,
    fileSizeLimit: options.fileSizeLimit,
    annotationDomain: options.annotationDomain,
    ambassadorId: options.ambassadorId,
  };
  // Every file's problems in one report, the records' and the modules' alike, each naming its file.
  const files = await loadFolder(options.configDir, START_WANTS, folderOptions);
  // Given up before the database is made: a first start leaves no data folder.
  options.signal?.throwIfAborted();
  if (files.problems.length > 0 || files.config === undefined) throw new ConfigError(files.problems);
  let config: GatewayConfig = files.config;
  for (const warning of configWarnings(config)) logger.warn({ warning }, 'config warning');
  let loadedAt = new Date();
  // Before the database: settings that cannot be built are refused before a first start makes it.
  const tracing: Tracing = createTracing({
    settings: tracingSettings(options, config.tracingService),
    version: VERSION,
  });
  registerTraceMetrics(metrics.registry, () => tracing.counts());

  // Seeded from the booking data the folder check read, not from a second reading of the file.
  const storage = await openBookingStorage({ ...options, data: files.bookings, logger, metrics }).catch(
    async (err: unknown) => {
      await tracing.shutdown();
      throw err;
    },
  );
  const bookingDatabase = storage.database;
  const registry = new Map<string, GatehouseModule>();
  let gateway: Gateway | undefined;
  /** Closes what a start that failed half-way has opened: the data folder is unlocked, and nothing keeps the process alive. */
  async function abandon(): Promise<void> {
    await gateway?.close();
    await Promise.all([...registry.values()].map(async (m) => m.close?.()));
    await bookingDatabase?.close();
    await tracing.shutdown();
  }
  let builtins: ReturnType<typeof createBuiltinModules>;
  try {
    options.signal?.throwIfAborted();
    builtins = createBuiltinModules({
      configDir: options.configDir,
      redisUrl: options.redisUrl,
      bookingStores: storage.stores,
      logger,
      files,
      fileSizeLimit: options.fileSizeLimit,
      maxDescriptorEntries: options.maxDescriptorEntries,
    });
  } catch (err) {
    await abandon();
    throw err;
  }
  for (const m of builtins.modules) registry.set(m.name, m);
  // What the folder held when the configuration that serves was read: diag shows it.
  let folderReport = files.report;
  const redis = builtins.redis;
  const redisReady = redis && redisReadiness(redis.client, logger.child({ module: 'ratelimit' }));
  const databaseReady = bookingDatabase && (() => bookingDatabase.ready());

  // diag describes the gateway built below; it reads it only when a page is asked for.
  const diag = createGatehouseDiag({
    version: VERSION,
    startedAt,
    configDir: options.configDir,
    // Switched together by a reload (see onApplied below), read together here.
    serving: () => ({ config, loadedAt, routes: gateway!.snapshot().routes }),
    lastReload: () => ({ at: reloader.lastReloadAt, problems: reloader.configErrors }),
    modules: registry,
    counters,
    dependencies: dependencyStatus({
      config: () => config,
      modules: registry,
      gateway: { upstreams: () => gateway?.upstreams() ?? [] },
      redis: redisReady && { where: describeRedisUrl(options.redisUrl!), ready: redisReady },
      database: databaseReady && { where: describeStorage(options), ready: databaseReady },
      bookings: describeStorage(options),
      metrics,
    }),
    folder: () => folderReport,
  });
  registry.set(diag.name, diag);
  for (const m of options.modules) registry.set(m.name, m);

  const events: GatewayEvents = {
    authDecision: (outcome) => metrics.recordAuth(outcome),
    rateLimitDecision: (outcome) => metrics.recordRateLimit(outcome),
    upstreamError: (route, failure) => metrics.recordUpstreamError(route, failure),
    upstreamRetry: (route) => metrics.recordUpstreamRetry(route),
    upstreamOverflow: (cluster, limit) => metrics.recordUpstreamOverflow(cluster, limit),
    upstreamEjection: (cluster) => metrics.recordUpstreamEjection(cluster),
  };
  const gatewayLogger = logger.child({ module: 'gateway' });
  const logUnexpected = logUnexpectedError(logger);
  // Mounted, the host's error listeners hear it too, as they hear their own app's.
  const reportUnexpected = (err: unknown, ctx: Context): void => {
    logUnexpected(err, ctx);
    if (ctx.app !== app) ctx.app.emit('error', err, ctx);
  };
  // Redis and the bookings database asked together: an operator sees both when both are down.
  const dependenciesReady = allReady([redisReady, databaseReady]);
  // Set as a stop begins: a load balancer that asks takes requests elsewhere while they are still answered.
  let draining = false;
  try {
    gateway = createGateway({
      modules: registry,
      bodyLimit: options.bodyLimit,
      trustProxy: options.trustProxy,
      sourceCluster: options.sourceCluster,
      errors: { onUnexpected: reportUnexpected },
      events,
      upstreams: { clusterDomain: options.clusterDomain, retryBufferBytes: options.retryBufferBytes },
      stages: {
        auth: (record, modules, e) => createAuthStage(record, modules, { ...e, logger: gatewayLogger }),
        rateLimit: (record, modules, e) => createRateLimitStage(record, modules, { ...e, logger: gatewayLogger }),
      },
      readiness: () => {
        if (draining) throw new Error('the gateway is shutting down');
        return dependenciesReady?.();
      },
      tracing,
    });
    // Built in slices: an app that embeds it goes on answering meanwhile.
    gateway.reconfigure(await gateway.prepare(config));
    options.signal?.throwIfAborted();
  } catch (err) {
    await abandon();
    throw err;
  }
  const gw = gateway;

  // One trusted hop: ctx.ip is the address the proxy wrote last, not the first, which the client wrote.
  const app = leanKoa(new Koa({ proxy: options.trustProxy, maxIpsCount: 1 }));
  app.silent = true;
  // A module routed in process runs on this app's context, so the error its
  // own error handler answers with a bare 500 (a store that failed) is emitted
  // here: silent, the app would drop it, and the cause with it.
  logAppErrors(app, logger);
  // The gateway's error handler is not in front of this path: the metrics get one of their own.
  const serveMetrics: (ctx: Context, next: Koa.Next) => Promise<void> = compose([
    errorHandler({ onUnexpected: reportUnexpected }),
    metricsHandler(metrics),
  ]);
  app.use(enterFromHost(app, { onUnexpected: reportUnexpected }));
  app.use(accessLog({ logger, metrics, counters }));
  app.use((ctx, next) => {
    if (ctx.request.path !== METRICS_PATH) return next();
    // The gateway drops a client's X-Travel-User itself; this path never reaches it.
    dropClaimedUser(ctx.req);
    return serveMetrics(ctx, next);
  });
  // The gateway's middleware in this app's own chain: a nested compose would cost a step more per request.
  for (const middleware of gw.app.middleware) app.use(middleware);

  let grpcServer: ReturnType<typeof createRateLimitGrpcServer> | undefined;
  let reloader: Reloader;
  try {
    grpcServer =
      options.grpcPort === false
        ? undefined
        : createRateLimitGrpcServer(builtins.rateLimit, {
            host: options.grpcHost,
            port: options.grpcPort,
            bound: options.ports?.grpc,
            maxMessageBytes: options.grpcMaxMessageBytes,
            maxConnections: options.grpcMaxConnections,
            requestTimeoutMs: options.grpcRequestTimeoutMs,
          });
    reloader = createReloader({
      configDir: options.configDir,
      folder: folderOptions,
      gateway: gw,
      modules: registry,
      builtins,
      usersText: files.usersText,
      logger,
      metrics,
      onApplied(next, folder) {
        config = next;
        folderReport = folder.report;
        loadedAt = new Date();
        server?.acceptUpgrades(tunnelsUpgrades(config));
        // A TracingService added, changed or removed: tracing follows it.
        const wasOn = tracing.settings;
        try {
          tracing.configure(tracingSettings(options, next.tracingService));
        } catch (err) {
          logger.error({ err }, 'tracing could not be set up as the TracingService says; tracing stays as it was');
        }
        if (tracing.settings !== wasOn) logger.info({ tracing: describeTracing(tracing.settings) }, 'tracing changed');
      },
      tracing,
    });
  } catch (err) {
    await abandon();
    throw err;
  }

  let server: RunningServer | undefined;
  let watcher: FolderWatcher | undefined;
  let tlsWatcher: FolderWatcher | undefined;
  let stopping: Promise<void> | undefined;
  let starting: Promise<Listening> | undefined;

  /** Listens for HTTP(S) and gRPC, and watches the folder unless told not to. */
  async function listenAll(): Promise<Listening> {
    // Set before the files are read, so that a change while they are read is seen.
    tlsWatcher =
      options.tls && options.watch ? followTlsFiles(options.tls, () => server?.reloadTls(), logger) : undefined;
    server = await listen(app.callback(), {
      host: options.host,
      port: options.port,
      tls: options.tls,
      fileSizeLimit: options.fileSizeLimit,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs,
      http2: options.http2,
      http2Limits: {
        maxConcurrentStreams: options.http2MaxConcurrentStreams,
        maxSessionMemoryMib: options.http2MaxSessionMemory,
      },
      bound: options.ports?.http,
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
    logger.info(
      { url, grpcPort, configDir: options.configDir, tracing: describeTracing(tracing.settings) },
      'gatehouse listening',
    );
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
    tracing,
    reload: () => reloader.reload(),
    start() {
      if (stopping)
        return Promise.reject(new Error('this Gatehouse is stopped: create another with createGatehouse()'));
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
        draining = true;
        // Only what listens has clients to drain: a Gatehouse mounted in another app closes at once.
        if (server !== undefined) await drainFor([server, grpcServer], options.drainDelayMs, logger);
        await Promise.all([server?.close(options.shutdownGraceMs), grpcServer?.stop()]);
        await reloader.stop();
        await gw.close();
        await Promise.all([...registry.values()].map(async (m) => m.close?.()));
        // Last: the booking modules answered their last request above.
        await bookingDatabase?.close();
        // The spans of the last requests go out before the process does.
        await tracing.shutdown();
        logger.info('gatehouse stopped');
      })();
      return stopping;
    },
  };
  return gatehouse;
}
