/**
 * @module cli/serve
 * `gatehouse serve <module>`: one module alone on its own port, its files read
 * from the config folder. The rate-limit service serves gRPC, the others HTTP.
 */
import { join } from 'node:path';
import { createApiModule } from '../api';
import { createAuthService, type AuthService } from '../auth';
import { createCarBookingModule, createHotelBookingModule, type BookingModule, type BookingStore } from '../bookings';
import { fileSystemSource } from '../files';
import {
  describeRedisUrl,
  describeStorage,
  drainFor,
  listen,
  listenFailure,
  openBookingStorage,
  redisReadiness,
  USERS_FILE,
  type BookingStorage,
  type LoadedFolder,
  type LoadFolderOptions,
  type ResolvedOptions,
  type RunningServer,
} from '../gatehouse';
import type { GatehouseModule } from '../gateway';
import {
  createRateLimitGrpcServer,
  createRateLimitService,
  createRedisStore,
  type RateLimitService,
} from '../ratelimit';
import { hostPort } from '../http';
import type { BoundPort } from '../ports';
import { createMetrics, logAppErrors, type Logger } from '../telemetry';
import { assertFolder, loadFiles, moduleReload, watchModule } from './module-files';
import { moduleFront } from './module-front';

import { isBookingModule, SERVABLE_MODULES, type ServableModule } from './servable';

export { isBookingModule, isServable, SERVABLE_MODULES, type ServableModule } from './servable';

/** What a module alone is run with: the options `serve` reads, its port bound, and the process logger. */
export type ServeOptions = Pick<
  ResolvedOptions,
  | 'configDir'
  | 'host'
  | 'watch'
  | 'fileSizeLimit'
  | 'drainDelayMs'
  | 'redisUrl'
  | 'databaseUrl'
  | 'dataDir'
  | 'bookingStore'
  | 'databaseTimeoutMs'
  | 'pgliteSharedBuffers'
  | 'pgliteCompiler'
  | 'grpcMaxMessageBytes'
  | 'grpcMaxConnections'
  | 'grpcRequestTimeoutMs'
  | 'maxDescriptorEntries'
> & {
  /** The port, bound beforehand: taken, it was said before a database was opened. */
  readonly port: BoundPort;
  readonly logger: Logger;
  /** Gives the start up at its next step once aborted (a stop signal while it starts). */
  readonly signal?: AbortSignal;
};

export interface Served {
  /** `host:port` for gRPC, a URL for HTTP. */
  address: string;
  /** `gRPC` for the rate-limit service; none for HTTP, which its URL says. */
  protocol?: string;
  /** The folder the module reads its files from; none for a module that reads none. */
  configDir?: string;
  /** Where the rate-limit service keeps its counters when not in memory (`Redis at redis://db:6379/`). */
  counters?: string;
  /** Where a booking service keeps its bookings, in words (`PGlite in /srv/data`). */
  bookings?: string;
  /** The process logger, at `LOG_LEVEL`. */
  logger: Logger;
  /** Reads the module's files again (SIGHUP), as a change to them does; never rejects. */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

function httpModule(
  name: string,
  configDir: string,
  files: LoadedFolder | undefined,
  folder: LoadFolderOptions,
  logger: Logger,
  store?: BookingStore,
): GatehouseModule {
  const bookingData = files?.bookings ? { configDir, data: files.bookings, fileSizeLimit: folder.fileSizeLimit } : {};
  switch (name) {
    case 'api':
      // Alone, it sits behind a gateway: absolute URLs follow X-Forwarded-Proto/-Host.
      return createApiModule({ proxy: true });
    case 'auth':
      // The process logger, so that LOG_LEVEL and the redaction of credentials apply as under `start`.
      // The folder watcher tells it of changes: its own watch would keep to
      // the folder it first found, and miss a repointed link or a swapped folder.
      return createAuthService({
        usersFile: join(configDir, USERS_FILE),
        users: files?.users,
        fileSizeLimit: folder.fileSizeLimit,
        logger: logger.child({ module: 'auth' }),
      });
    case 'hotel-booking':
      return createHotelBookingModule({ ...bookingData, proxy: true, store });
    case 'car-booking':
      return createCarBookingModule({ ...bookingData, proxy: true, store });
    default:
      throw new Error(`unknown module '${name}'; modules: ${SERVABLE_MODULES.join(', ')}`);
  }
}

/** How the checked files reach an HTTP module alone: an unchanged users file keeps the cache of verified credentials. */
function useFilesOf(
  name: string,
  module: GatehouseModule,
  files: LoadedFolder | undefined,
): (next: LoadedFolder) => void {
  let usersText = files?.usersText;
  return (next) => {
    if (name === 'auth') {
      if (next.users && next.usersText !== usersText) (module as AuthService).useUsers(next.users);
      usersText = next.usersText;
    } else if (next.bookings) {
      (module as BookingModule).useData(next.bookings);
    }
  };
}

/** Starts one module alone. */
export async function serveModule(name: string, options: ServeOptions): Promise<Served> {
  const { configDir, host, logger, watch, drainDelayMs, signal } = options;
  const folder: LoadFolderOptions = { source: fileSystemSource, fileSizeLimit: options.fileSizeLimit };
  // The api module alone reads no file.
  let files: LoadedFolder | undefined;
  if (name !== 'api') {
    assertFolder(configDir);
    files = await loadFiles(name as Exclude<ServableModule, 'api'>, configDir, folder);
  }

  signal?.throwIfAborted();

  if (name === 'ratelimit') {
    const store = options.redisUrl ? createRedisStore({ url: options.redisUrl }) : undefined;
    // Losing Redis and getting it back are logged once each, as gatehouse start logs them.
    if (store) redisReadiness(store.client, logger);
    let service: RateLimitService;
    try {
      service = createRateLimitService({
        limitsDir: configDir,
        loaded: files?.limits,
        fileSizeLimit: folder.fileSizeLimit,
        store,
        logger,
        maxDescriptorEntries: options.maxDescriptorEntries,
      });
    } catch (err) {
      // Bad limits: a Redis client left open would keep reconnecting, and the process alive.
      await store?.close();
      throw err;
    }
    let server: ReturnType<typeof createRateLimitGrpcServer>;
    let bound: number;
    try {
      server = createRateLimitGrpcServer(service, {
        host,
        port: options.port.port,
        bound: options.port,
        maxMessageBytes: options.grpcMaxMessageBytes,
        maxConnections: options.grpcMaxConnections,
        requestTimeoutMs: options.grpcRequestTimeoutMs,
      });
    } catch (err) {
      await service.close();
      throw err;
    }
    try {
      bound = await server.start();
    } catch (err) {
      await service.close();
      throw listenFailure(err, 'gRPC', host, options.port.port);
    }
    const reload = moduleReload('ratelimit', configDir, folder, (next) => service.useLimits(next.limits!), logger);
    const watcher = watchModule(configDir, reload, watch);
    return {
      address: hostPort(host, bound),
      protocol: 'gRPC',
      configDir,
      counters: options.redisUrl === undefined ? undefined : `Redis at ${describeRedisUrl(options.redisUrl)}`,
      logger,
      reload,
      async stop() {
        watcher?.close();
        await drainFor([server], drainDelayMs, logger);
        await server.stop();
        await service.close();
        logger.info({ module: name }, `${name} stopped`);
      },
    };
  }

  // A booking service alone keeps its bookings where `gatehouse start` would, and seeds its own kind only, from the data checked above.
  const kind = name === 'car-booking' ? 'car' : 'hotel';
  const metrics = createMetrics({ logger });
  let storage: BookingStorage = {};
  let bookings: string | undefined;
  if (isBookingModule(name)) {
    const storageOptions = {
      configDir,
      bookingStore: options.bookingStore,
      databaseUrl: options.databaseUrl,
      dataDir: options.dataDir,
      databaseTimeoutMs: options.databaseTimeoutMs,
      pgliteSharedBuffers: options.pgliteSharedBuffers,
      pgliteCompiler: options.pgliteCompiler,
    };
    storage = await openBookingStorage({
      ...storageOptions,
      data: files?.bookings,
      fileSizeLimit: folder.fileSizeLimit,
      kinds: [kind],
      logger,
      metrics,
    });
    bookings = describeStorage(storageOptions);
  }
  // Set as a stop begins: a load balancer that asks takes requests elsewhere while they are still answered.
  let draining = false;
  let module: GatehouseModule | undefined;
  let server: RunningServer;
  try {
    signal?.throwIfAborted();
    module = httpModule(name, configDir, files, folder, logger, storage.stores?.[kind]);
    logAppErrors(module.app!, logger);
    const front = moduleFront(name, module.app!, metrics, logger, () => {
      if (draining) throw new Error('the module is shutting down');
      return storage.database?.ready();
    });
    server = await listen(front.listener, {
      host,
      port: options.port.port,
      bound: options.port,
      onRejected: front.onRejected,
    });
  } catch (err) {
    // The auth service watches its users file: close it so that the process can end.
    await module?.close?.();
    await storage.database?.close();
    throw err;
  }
  const reload =
    name === 'api'
      ? async () => void logger.info({ module: name }, 'nothing to reload: the api module reads no file')
      : moduleReload(
          name as Exclude<ServableModule, 'api'>,
          configDir,
          folder,
          useFilesOf(name, module, files),
          logger,
        );
  const watcher = name === 'api' ? undefined : watchModule(configDir, reload, watch);
  return {
    address: `http://${hostPort(host, server.port)}`,
    configDir: name === 'api' ? undefined : configDir,
    bookings,
    logger,
    reload,
    async stop() {
      watcher?.close();
      draining = true;
      await drainFor([server], drainDelayMs, logger);
      await server.close();
      await module.close?.();
      await storage.database?.close();
      logger.info({ module: name }, `${name} stopped`);
    },
  };
}
