/**
 * @module gatehouse/gatehouse
 * A whole Gatehouse put together: the config folder loaded, the built-in
 * modules, the gateway in front of them with its access log and metrics,
 * the gRPC rate-limit server beside it and the reloader; its start and
 * stop are in ./lifecycle, its ports in ./served-ports.
 */
import {
  ConfigError,
  configWarnings,
  createGateway,
  createAuthStage,
  createRateLimitStage,
  type Gateway,
  type GatewayConfig,
  type GatehouseModule,
} from '../gateway';
import { createLogger, createMetrics, createRouteCounters, type RouteCounters } from '../telemetry';
import { describeStorage } from './storage-words';
import { bookingsOnDemand, routesToBookings } from './bookings-on-demand';
import { createRootApp, gatewayEvents } from './root-app';
import { createBuiltinModules } from './builtins';
import { createGatehouseDiag } from './diag';
import { loadFolder, type FolderWants, type LoadFolderOptions } from './folder';
import { allReady, redisReadiness } from './readiness';
import type { Reloader } from './folder/reload';
import { createGatehouseReloader } from './gatehouse-reloader';
import { describeRedisUrl, resolveOptions, type GatehouseOptions } from './options';
import { dependencyStatus } from './status';
import { readTlsFiles } from './serving/tls-files';
import { createGrpcServer, createServedPorts, tunnelsUpgrades } from './served-ports';
import type { Running } from './start';
import { createLifecycle } from './lifecycle';
import type { Gatehouse, SharedParts } from './types';
import { packageVersion } from './version';
import { createTracing, registerTraceMetrics, type Tracing } from '../tracing';
import { tracingSettings } from './tracing';

const VERSION = packageVersion();

export type { ReloadOutcome } from './folder/reload';
export type { Gatehouse, Listening, SharedParts } from './types';

/** What a start reads: the records, the limits, and the users file and booking data when the folder has them. */
const START_WANTS: FolderWants = { records: true, limits: true, users: 'present', bookings: 'present' };

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
  for (const warning of [...files.report.warnings, ...configWarnings(config)])
    logger.warn({ warning }, 'config warning');
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
  /** Whether `next` routes to a booking module: then the database is reserved at once, and opened in the background once it serves. */
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
  const running: Running = { draining: false };
  try {
    gateway = createGateway({
      modules: registry,
      bodyLimit: options.bodyLimit,
      trustProxy: options.trustProxy,
      sourceCluster: options.sourceCluster,
      errors: { onUnexpected: reportUnexpected },
      events: gatewayEvents(metrics),
      upstreams: { clusterDomain: options.clusterDomain, retryBufferBytes: options.retryBufferBytes },
      tls: { fileSizeLimit: options.fileSizeLimit, httpsPort: () => ports.https.port },
      stages: {
        auth: (record, modules, e) => createAuthStage(record, modules, { ...e, logger: gatewayLogger }),
        rateLimit: (record, modules, e) => createRateLimitStage(record, modules, { ...e, logger: gatewayLogger }),
      },
      readiness: async () => {
        if (running.draining) throw new Error('the gateway is shutting down');
        if (running.grpcStarting) throw new Error('the gRPC rate-limit port is starting');
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

  let reloader: Reloader;
  try {
    reloader = createGatehouseReloader({
      options,
      folder: folderOptions,
      gateway: gw,
      modules: registry,
      builtins,
      usersText: files.usersText,
      logger,
      metrics,
      tracing,
      bookings,
      wantsBookings,
      onApplied(next, folder) {
        config = next;
        folderReport = folder.report;
        loadedAt = new Date();
        running.server?.acceptUpgrades(tunnelsUpgrades(config));
        void ports.https.apply();
        void ports.additional.apply();
      },
    });
  } catch (err) {
    await abandon();
    throw err;
  }

  const ports = createServedPorts({
    options,
    app,
    gateway: gw,
    config: () => config,
    mainServer: () => running.server,
    logger,
    metrics,
    counters,
  });
  const lifecycle = createLifecycle(
    {
      options,
      app,
      ports,
      grpcServer: () => createGrpcServer(options, builtins.rateLimit),
      tracing,
      logger,
      config: () => config,
      folderWatchedElsewhere: shared.folderWatchedElsewhere,
      reload: () => gatehouse.reload(),
    },
    { options, ports, reloader, gateway: gw, modules: registry, bookings, tracing, logger },
    running,
    // A start that listens lets the bookings database open.
    () => bookings.serving(),
  );

  const gatehouse: Gatehouse = {
    app,
    gateway: gw,
    modules: registry,
    get grpcServer() {
      return running.grpcServer;
    },
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
      await ports.additional.idle();
      return outcome;
    },
    httpsPort: () => ports.https.port,
    additionalPorts: () => ports.additional.ports,
    start: lifecycle.start,
    stop: lifecycle.stop,
  };
  return gatehouse;
}
