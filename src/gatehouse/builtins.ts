/**
 * @module gatehouse/builtins
 * The built-in modules a config folder brings up: the versioned API, the two
 * booking services, the auth service over `users.htpasswd`, the rate-limit
 * service over `ratelimit.yaml`, each from its own file in the folder.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createApiModule } from '../api';
import { createAuthService, USERS_FILE, type AuthService } from '../auth';
import {
  BOOKINGS_FILE,
  createCarBookingModule,
  createHotelBookingModule,
  type BookingKind,
  type BookingModule,
  type BookingStore,
} from '../bookings';
import type { GatehouseModule } from '../gateway';
import {
  createRateLimitService,
  createRedisStore,
  type RateLimitService,
  type RateLimitStore,
  type RedisStore,
} from '../ratelimit';
import type { Logger } from '../telemetry';
import type { CheckedFolder } from './folder/check';

export interface BuiltinModules {
  /** Every module by name, the diag module excepted (it needs the gateway). */
  modules: GatehouseModule[];
  auth?: AuthService;
  rateLimit: RateLimitService;
  /** The rate-limit service's Redis store, when `redisUrl` is given. */
  redis?: RedisStore;
  /** Whether the booking modules read their catalogue from the folder's `bookings.yaml` (and re-read it on reload). */
  bookingData: boolean;
  /** The two booking modules. */
  bookings: BookingModule[];
}

export interface BuiltinOptions {
  configDir: string;
  redisUrl?: string;
  /** The rate-limit counters, when they live elsewhere than Redis or this thread's memory (shared by workers). */
  counters?: RateLimitStore;
  /** Where the booking modules keep their bookings (./bookings); default, each its own in memory. */
  bookingStores?: Record<BookingKind, BookingStore>;
  logger: Logger;
  /**
   * The folder's files as a folder check read them (users, limits, booking
   * data): the modules are built from them, and read nothing. Without it,
   * each module reads its own file.
   */
  files?: CheckedFolder;
  /** The largest file a module reads itself, in bytes. Default 8 MiB. */
  fileSizeLimit?: number;
  /** Most entries in one descriptor of a rate-limit request; the service's default when absent. */
  maxDescriptorEntries?: number;
}

/**
 * Builds the built-in modules from the files of the config folder. A file that
 * is missing leaves its module out (the users file) or empty (the data files);
 * a file that is invalid throws with every problem listed.
 */
export function createBuiltinModules(options: BuiltinOptions): BuiltinModules {
  const { configDir, logger, files, fileSizeLimit } = options;
  const modules: GatehouseModule[] = [createApiModule({ proxy: false })];

  const bookingData = files ? files.bookings !== undefined : existsSync(join(configDir, BOOKINGS_FILE));
  const bookingOptions = bookingData ? { configDir, data: files?.bookings, fileSizeLimit } : {};
  const stores = options.bookingStores;
  const bookings = [
    createHotelBookingModule({ ...bookingOptions, store: stores?.hotel }),
    createCarBookingModule({ ...bookingOptions, store: stores?.car }),
  ];
  modules.push(...bookings);

  const usersFile = join(configDir, USERS_FILE);
  let auth: AuthService | undefined;
  if (files ? files.users !== undefined : existsSync(usersFile)) {
    auth = createAuthService({
      usersFile,
      users: files?.users,
      fileSizeLimit,
      logger: logger.child({ module: 'auth' }),
    });
    modules.push(auth);
  } else {
    logger.warn({ usersFile }, 'no users file: the built-in auth service is not available');
  }

  const redis = options.redisUrl ? createRedisStore({ url: options.redisUrl }) : undefined;
  let rateLimit: RateLimitService;
  try {
    rateLimit = createRateLimitService({
      limitsDir: configDir,
      loaded: files?.limits,
      fileSizeLimit,
      store: redis ?? options.counters,
      logger: logger.child({ module: 'ratelimit' }),
      maxDescriptorEntries: options.maxDescriptorEntries,
    });
  } catch (err) {
    // Bad limits: the Redis client would otherwise keep reconnecting, and the process alive.
    void redis?.close();
    throw err;
  }
  modules.push(rateLimit);

  return { modules, auth, rateLimit, redis, bookingData, bookings };
}
