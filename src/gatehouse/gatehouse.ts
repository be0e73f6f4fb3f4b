/**
 * @module gatehouse/gatehouse
 * A whole Gatehouse: the config folder loaded, the built-in modules, the
 * gateway in front of them with its access log and metrics, the gRPC
 * rate-limit server beside it, config reload, and a graceful stop.
 */
import {
  allowedUpgrades,
  ConfigError,
  configWarnings,
  createGateway,
  createAuthStage,
  createRateLimitStage,
  type Gateway,
  type GatewayConfig,
  type GatehouseModule,
} from '../gateway';
import { hostPort } from '../http';
import { createRateLimitGrpcServer } from '../ratelimit';
import { createLogger, createMetrics, createRouteCounters, rejectedRequestLog, type RouteCounters } from '../telemetry';
import { describeStorage } from './bookings';
import { bookingsOnDemand, routesToBookings } from './bookings-on-demand';
import { createRootApp, gatewayEvents } from './root-app';
import { createBuiltinModules } from './builtins';
import { createGatehouseDiag } from './diag';
import { listen, type RunningServer } from './serving/http-server';
import { listenFailure } from './serving/listen-failure';
import { drainFor } from './serving/drain';
import { loadFolder, type FolderWants, type LoadFolderOptions } from './folder';
import { allReady, redisReadiness } from './readiness';
import { createReloader, type Reloader } from './folder/reload';
import { describeRedisUrl, resolveOptions, type GatehouseOptions } from './options';
import { dependencyStatus } from './status';
import { followTlsFiles, readTlsFiles, warnOfValidity } from './serving/tls-files';
import { createHttpsPort } from './https-port';
import { createAdditionalPorts } from './additional-ports';
import { watchFolder, type FolderWatcher } from './folder/watch';
import type { Gatehouse, Listening, SharedParts } from './types';
import { packageVersion } from './version';
import { createTracing, registerTraceMetrics, type Tracing } from '../tracing';
import { describeTracing, tracingSettings } from './tracing';

const VERSION = packageVersion();

export type { ReloadOutcome } from './folder/reload';
export type { Gatehouse, Listening, SharedParts } from './types';

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
export async function createGatehouse(input: GatehouseOptions = {}, shared: SharedParts = {}): Promise<Gatehouse> {
  const options = resolveOptions(input);
  // Read now as well as at start(): a file that cannot be served is said before a first start makes and seeds its database.
  if (options.tls) readTlsFiles(options.tls, options.fileSizeLimit);
  const logger = options.logger ?? createLogger({ level: options.logLevel });
  const metrics = createMetrics({ logger, gather: shared.gatherMetrics });
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

  // Opened once a Mapping routes to a booking module; seeded from the booking data the folder check read.
  const bookings = bookingsOnDemand({
    ...options,
    data: files.bookings,
    logger,
    metrics,
    sharedEngine: shared.bookingEngine,
  });
  const registry = new Map<string, GatehouseModule>();
  let gateway: Gateway | undefined;
  /** Closes what a start that failed half-way has opened: the data folder is unlocked, and nothing keeps the process alive. */
  async function abandon(): Promise<void> {
    await gateway?.close();
    await Promise.all([...registry.values()].map(async (m) => m.close?.()));
    await bookings.close();
    await tracing.shutdown();
  }
  let builtins: ReturnType<typeof createBuiltinModules>;
  try {
    options.signal?.throwIfAborted();
    builtins = createBuiltinModules({
      configDir: options.configDir,
      redisUrl: options.redisUrl,
      counters: shared.counters,
      bookingStores: bookings.stores,
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
  const databaseReady = options.bookingStore === 'memory' ? undefined : () => bookings.ready();

  // diag describes the gateway built below; it reads it only when a page is asked for.
  const diag = createGatehouseDiag({
    version: VERSION,
    startedAt,
    configDir: options.configDir,
    // Switched together by a reload (see onApplied below), read together here.
    serving: () => ({
      config,
      loadedAt,
      routes: gateway!.snapshot().routes,
      certificates: gateway!.tls()?.inService,
    }),
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
  /** Whether `next` routes to a booking module: then the database is reserved at once, and opened in the background. */
  const wantsBookings = (next: GatewayConfig) => routesToBookings(next, registry, builtins.bookings);
  try {
    if (wantsBookings(config)) await bookings.want();
  } catch (err) {
    await abandon();
    throw err;
  }

  const gatewayLogger = logger.child({ module: 'gateway' });
  const root = createRootApp({ trustProxy: options.trustProxy, logger, metrics, counters });
  const { app, reportUnexpected } = root;
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
      events: gatewayEvents(metrics),
      upstreams: { clusterDomain: options.clusterDomain, retryBufferBytes: options.retryBufferBytes },
      tls: { fileSizeLimit: options.fileSizeLimit, httpsPort: () => https.port },
      stages: {
        auth: (record, modules, e) => createAuthStage(record, modules, { ...e, logger: gatewayLogger }),
        rateLimit: (record, modules, e) => createRateLimitStage(record, modules, { ...e, logger: gatewayLogger }),
      },
      readiness: async () => {
        if (draining) throw new Error('the gateway is shutting down');
        await dependenciesReady?.();
        const version = shared.configVersion?.();
        return version === undefined ? undefined : { config: version };
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

  root.mount(gw);

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
      // A folder another process holds refuses the reload that would open it.
      beforeApply: (next) => (wantsBookings(next) ? bookings.want() : undefined),
      onApplied(next, folder) {
        config = next;
        folderReport = folder.report;
        loadedAt = new Date();
        server?.acceptUpgrades(tunnelsUpgrades(config));
        void https.apply();
        void additional.apply();
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
  const onRejected = rejectedRequestLog({ logger, metrics, counters });
  // HTTP/2 is offered on every port alike, with the same bounds; so is listening beside other workers.
  const http2Listening = {
    reusePort: options.reusePort,
    http2: options.http2,
    http2Limits: {
      maxConcurrentStreams: options.http2MaxConcurrentStreams,
      maxSessionMemoryMib: options.http2MaxSessionMemory,
    },
  };
  const https = createHttpsPort({
    host: options.host,
    port: options.httpsPort,
    handler: app.callback(),
    tls: () => gw.tls(),
    fallback: options.tls,
    fileSizeLimit: options.fileSizeLimit,
    logger,
    upgrades: () => tunnelsUpgrades(config),
    listen: { keepAliveTimeoutMs: options.keepAliveTimeoutMs, onRejected, ...http2Listening },
    metrics,
  });
  // The cleartext ports Hosts ask for beside PORT, served as it is.
  const additional = createAdditionalPorts({
    host: options.host,
    handler: app.callback(),
    hosts: () => config.hosts,
    // With --tls-cert, PORT speaks HTTPS: a Host that names it still opens nothing more.
    mainPort: () => server?.port,
    upgrades: () => tunnelsUpgrades(config),
    logger,
    listen: { keepAliveTimeoutMs: options.keepAliveTimeoutMs, onRejected, ...http2Listening },
  });
  let watcher: FolderWatcher | undefined;
  let tlsWatcher: FolderWatcher | undefined;
  let certificateWatcher: FolderWatcher | undefined;
  let stopping: Promise<void> | undefined;
  let starting: Promise<Listening> | undefined;

  /** Listens for HTTP(S) and gRPC, and watches the folder unless told not to. */
  async function listenAll(): Promise<Listening> {
    // Set before the files are read, so that a change while they are read is seen.
    tlsWatcher =
      options.tls && options.watch
        ? followTlsFiles(
            options.tls,
            () => {
              const reloaded = server?.reloadTls();
              https.reloadFallback();
              return reloaded;
            },
            logger,
          )
        : undefined;
    server = await listen(app.callback(), {
      host: options.host,
      port: options.port,
      tls: options.tls,
      fileSizeLimit: options.fileSizeLimit,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs,
      ...http2Listening,
      bound: options.ports?.http,
      onRejected,
    }).catch((err: unknown) => {
      tlsWatcher?.close();
      throw err;
    });
    if (options.tls && server.certificate) warnOfValidity(logger, options.tls.cert, server.certificate);
    server.acceptUpgrades(tunnelsUpgrades(config));
    let grpcPort: number | undefined;
    try {
      // The HTTPS port, when the configuration has a certificate; listen() names the port at fault.
      await https.start();
      await additional.start();
      grpcPort = await grpcServer?.start().catch((err: unknown) => {
        throw listenFailure(err, 'gRPC', options.grpcHost, options.grpcPort as number);
      });
    } catch (err) {
      await Promise.all([server.close(0), https.server?.close(0), additional.close(0)]);
      server = undefined;
      tlsWatcher?.close();
      throw err;
    }
    if (options.watch && !shared.folderWatchedElsewhere) {
      const reload = () => {
        void gatehouse.reload().catch((err: unknown) => logger.error({ err }, 'config reload failed'));
      };
      watcher = watchFolder(options.configDir, options.reloadDebounceMs, reload);
      certificateWatcher = https.watchFiles(reload);
    }
    const url = `${server.protocol}://${hostPort(options.host, server.port)}`;
    const httpsPort = https.port;
    const additionalPorts = additional.ports;
    logger.info(
      {
        url,
        httpsPort,
        additionalPorts,
        grpcPort,
        configDir: options.configDir,
        tracing: describeTracing(tracing.settings),
      },
      'gatehouse listening',
    );
    return {
      url,
      port: server.port,
      grpcPort,
      ...(httpsPort !== undefined ? { httpsPort } : {}),
      ...(additionalPorts.length > 0 ? { additionalPorts } : {}),
    };
  }

  const gatehouse: Gatehouse = {
    app,
    gateway: gw,
    modules: registry,
    grpcServer,
    get bookingDatabase() {
      return bookings.database;
    },
    get bookingsState() {
      return bookings.state;
    },
    openBookings: () => bookings.opened(),
    logger,
    metrics,
    options,
    tracing,
    async reload() {
      const outcome = await reloader.reload();
      // The cleartext ports the reload asked for are open (or said to be out of reach) when it resolves.
      await additional.idle();
      return outcome;
    },
    httpsPort: () => https.port,
    additionalPorts: () => additional.ports,
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
        certificateWatcher?.close();
        draining = true;
        // Only what listens has clients to drain: a Gatehouse mounted in another app closes at once.
        if (server !== undefined)
          await drainFor([server, https.server, ...additional.servers, grpcServer], options.drainDelayMs, logger);
        await Promise.all([
          server?.close(options.shutdownGraceMs),
          https.server?.close(options.shutdownGraceMs),
          additional.close(options.shutdownGraceMs),
          grpcServer?.stop(),
        ]);
        await reloader.stop();
        await gw.close();
        await Promise.all([...registry.values()].map(async (m) => m.close?.()));
        // Last: the booking modules answered their last request above.
        await bookings.close();
        // The spans of the last requests go out before the process does.
        await tracing.shutdown();
        logger.info('gatehouse stopped');
      })();
      return stopping;
    },
  };
  return gatehouse;
}
