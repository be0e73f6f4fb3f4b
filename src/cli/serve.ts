/**
 * @module cli/serve
 * `gatehouse serve <module>`: one module alone on its own port, its files read
 * from the config folder. The rate-limit service serves gRPC, the others HTTP.
 */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createApiModule } from '../api';
import { createAuthService } from '../auth';
import { BOOKINGS_FILE, createCarBookingModule, createHotelBookingModule, DEFAULT_DATABASE_TIMEOUT_MS, type BookingStore } from '../bookings';
import {
  bookingDatabaseOptions,
  checkRedisUrl,
  describeStorage,
  envPort,
  listen,
  listenFailure,
  openBookingStorage,
  USERS_FILE,
  watchFolder,
  type BookingStorage,
  type FolderWatcher,
  type RunningServer,
} from '../gatehouse';
import type { GatehouseModule } from '../gateway';
import { createRateLimitGrpcServer, createRateLimitService, createRedisStore, type RateLimitService } from '../ratelimit';
import { hostPort } from '../http';
import { createLogger, logAppErrors, type Logger } from '../telemetry';
import { logGrpcThrough } from './grpc-log';

export const SERVABLE_MODULES = ['api', 'auth', 'hotel-booking', 'car-booking', 'ratelimit'] as const;

/** A module name `serve` knows. */
export type ServableModule = (typeof SERVABLE_MODULES)[number];

/** Whether `serve` can run a module of this name. */
export function isServable(name: string): name is ServableModule {
  return (SERVABLE_MODULES as readonly string[]).includes(name);
}

/** Whether `name` is a booking service, which keeps its bookings in a database. */
export function isBookingModule(name: string): name is 'hotel-booking' | 'car-booking' {
  return name === 'hotel-booking' || name === 'car-booking';
}


export interface ServeOptions {
  configDir?: string;
  host?: string;
  port?: number;
  redisUrl?: string;
  /** hotel-booking, car-booking: PostgreSQL for the bookings. Default `DATABASE_URL`; without it, PGlite in `dataDir`. */
  databaseUrl?: string;
  /** hotel-booking, car-booking: PGlite's folder. Default `GATEHOUSE_DATA`, else `data` beside the config folder. */
  dataDir?: string;
  /** hotel-booking, car-booking: keep bookings in memory instead (gone on stop). */
  bookingStore?: 'database' | 'memory';
  /**
   * Re-read the module's files when they change (users, limits, booking
   * data), as `gatehouse start` does. Default true.
   */
  watch?: boolean;
}

export interface Served {
  /** `host:port` for gRPC, a URL for HTTP. */
  address: string;
  /** `gRPC` for the rate-limit service; none for HTTP, which its URL says. */
  protocol?: string;
  /** The folder the module reads its files from; none for a module that reads none. */
  configDir?: string;
  /** Where a booking service keeps its bookings, in words (`PGlite in /srv/data`). */
  bookings?: string;
  stop(): Promise<void>;
}

/** How long the config folder must be still before a change is read. */
const SETTLE_MS = 200;

/**
 * Reloads `module` when its folder changes. A module that cannot take the
 * new files keeps the old ones. The rate-limit service logs its reloads
 * itself; for a module that does not (the booking modules), pass `logger`.
 */
function watchModule(module: GatehouseModule, configDir: string, logger?: Logger): FolderWatcher {
  return watchFolder(configDir, SETTLE_MS, () => {
    module.reload!().then(
      () => logger?.info({ module: module.name, configDir }, 'files reloaded'),
      (err: unknown) => logger?.error({ module: module.name, err: (err as Error).message }, 'files refused; the previous ones stay'),
    );
  });
}

function httpModule(name: string, configDir: string, logger: Logger, store?: BookingStore): GatehouseModule {
  const bookingData = existsSync(join(configDir, BOOKINGS_FILE)) ? { configDir } : {};
  switch (name) {
    case 'api':
      // Alone, it sits behind a gateway: absolute URLs follow X-Forwarded-Proto/-Host.
      return createApiModule({ proxy: true });
    case 'auth':
      // The process logger, so that LOG_LEVEL and the redaction of credentials apply as under `start`.
      // The folder watcher tells it of changes: its own watch would keep to
      // the folder it first found, and miss a repointed link or a swapped folder.
      return createAuthService({ usersFile: join(configDir, USERS_FILE), logger: logger.child({ module: 'auth' }) });
    case 'hotel-booking':
      return createHotelBookingModule({ ...bookingData, proxy: true, store });
    case 'car-booking':
      return createCarBookingModule({ ...bookingData, proxy: true, store });
    default:
      throw new Error(`unknown module '${name}'; modules: ${SERVABLE_MODULES.join(', ')}`);
  }
}

/**
 * Throws unless `dir` is a folder. A module reading its files from a folder
 * that is not there would otherwise serve without them (a rate-limit service
 * without limits answers OK to everything), as `start` refuses to.
 */
function assertFolder(dir: string): void {
  let reason: string | undefined;
  try {
    if (!statSync(dir).isDirectory()) reason = 'not a folder';
  } catch (err) {
    reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : (err as Error).message;
  }
  if (reason) throw new Error(`${dir}: cannot read the config folder: ${reason}`);
}

/** Starts one module alone. */
export async function serveModule(name: string, options: ServeOptions): Promise<Served> {
  const configDir = resolve(options.configDir ?? (process.env.GATEHOUSE_CONFIG || 'config'));
  const host = options.host ?? (process.env.HOST || '127.0.0.1');
  const redisUrl = options.redisUrl ?? (process.env.REDIS_URL || undefined);
  if (name === 'ratelimit' && redisUrl !== undefined) checkRedisUrl(redisUrl, options.redisUrl === undefined ? 'REDIS_URL' : 'the Redis URL');
  const watch = options.watch ?? true;
  // Everything the environment says is checked before anything listens: a
  // mistake found later would leave a server open, and the process running.
  const port = options.port ?? (name === 'ratelimit' ? envPort(process.env.GRPC_PORT, 'GRPC_PORT', 8081) : envPort(process.env.PORT, 'PORT', 8080));
  const databaseOptions = isBookingModule(name) ? bookingDatabaseOptions(options, configDir) : undefined;
  const logger = createLogger();
  // The api module alone reads no file.
  if (name !== 'api') assertFolder(configDir);

  if (name === 'ratelimit') {
    logGrpcThrough(logger);
    const store = redisUrl ? createRedisStore({ url: redisUrl }) : undefined;
    let service: RateLimitService;
    try {
      service = createRateLimitService({ limitsDir: configDir, store, logger });
    } catch (err) {
      // Bad limits: a Redis client left open would keep reconnecting, and the process alive.
      await store?.close();
      throw err;
    }
    const server = createRateLimitGrpcServer(service, { host, port });
    let bound: number;
    try {
      bound = await server.start();
    } catch (err) {
      await service.close();
      throw listenFailure(err, 'gRPC', host, port);
    }
    const watcher = watch ? watchModule(service, configDir) : undefined;
    return {
      address: hostPort(host, bound),
      protocol: 'gRPC',
      configDir,
      async stop() {
        watcher?.close();
        await server.stop();
        await service.close();
      },
    };
  }

  // A booking service alone keeps its bookings where `gatehouse start` would, and seeds its own kind only.
  const kind = name === 'car-booking' ? 'car' : 'hotel';
  let storage: BookingStorage = {};
  let bookings: string | undefined;
  if (databaseOptions) {
    const storageOptions = { configDir, bookingStore: options.bookingStore ?? 'database', ...databaseOptions, databaseTimeoutMs: DEFAULT_DATABASE_TIMEOUT_MS } as const;
    storage = await openBookingStorage({ ...storageOptions, kinds: [kind], logger });
    bookings = describeStorage(storageOptions);
  }
  const module = httpModule(name, configDir, logger, storage.stores?.[kind]);
  logAppErrors(module.app!, logger);
  let server: RunningServer;
  try {
    server = await listen(module.app!.callback(), { host, port });
  } catch (err) {
    // The auth service watches its users file: close it so that the process can end.
    await module.close?.();
    await storage.database?.close();
    throw err;
  }
  // The auth service logs its reloads itself; the others' are logged here.
  const watcher = watch && module.reload ? watchModule(module, configDir, name === 'auth' ? undefined : logger) : undefined;
  return {
    address: `http://${hostPort(host, server.port)}`,
    configDir: name === 'api' ? undefined : configDir,
    bookings,
    async stop() {
      watcher?.close();
      await server.close();
      await module.close?.();
      await storage.database?.close();
    },
  };
}
