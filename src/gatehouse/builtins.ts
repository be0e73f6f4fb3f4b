/**
 * @module gatehouse/builtins
 * The built-in modules a config folder brings up: the versioned API, the two
 * booking services, the auth service over `users.htpasswd`, the rate-limit
 * service over `ratelimit.yaml`, each from its own file in the folder.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createApiModule } from '../api';
import { createAuthService, type AuthService } from '../auth';
import { BOOKINGS_FILE, createCarBookingModule, createHotelBookingModule, type BookingKind, type BookingStore } from '../bookings';
import type { GatehouseModule } from '../gateway';
import { createRateLimitService, createRedisStore, type RateLimitService, type RedisStore } from '../ratelimit';
import type { Logger } from '../telemetry';

export const USERS_FILE = 'users.htpasswd';

export interface BuiltinModules {
  /** Every module by name, the diag module excepted (it needs the gateway). */
  modules: GatehouseModule[];
  auth?: AuthService;
  rateLimit: RateLimitService;
  /** The rate-limit service's Redis store, when `redisUrl` is given. */
  redis?: RedisStore;
  /** Whether the booking modules read their catalogue from the folder's `bookings.yaml` (and re-read it on reload). */
  bookingData: boolean;
}

export interface BuiltinOptions {
  configDir: string;
  redisUrl?: string;
  /** Where the booking modules keep their bookings (./bookings); default, each its own in memory. */
  bookingStores?: Record<BookingKind, BookingStore>;
  logger: Logger;
}

/**
 * Builds the built-in modules from the files of the config folder. A file that
 * is missing leaves its module out (the users file) or empty (the data files);
 * a file that is invalid throws with every problem listed.
 */
export function createBuiltinModules(options: BuiltinOptions): BuiltinModules {
  const { configDir, logger } = options;
  const modules: GatehouseModule[] = [createApiModule({ proxy: false })];

  const bookingData = existsSync(join(configDir, BOOKINGS_FILE));
  const bookingOptions = bookingData ? { configDir } : {};
  const stores = options.bookingStores;
  modules.push(createHotelBookingModule({ ...bookingOptions, store: stores?.hotel }), createCarBookingModule({ ...bookingOptions, store: stores?.car }));

  const usersFile = join(configDir, USERS_FILE);
  let auth: AuthService | undefined;
  if (existsSync(usersFile)) {
    auth = createAuthService({ usersFile, logger: logger.child({ module: 'auth' }) });
    modules.push(auth);
  } else {
    logger.warn({ usersFile }, 'no users file: the built-in auth service is not available');
  }

  const redis = options.redisUrl ? createRedisStore({ url: options.redisUrl }) : undefined;
  let rateLimit: RateLimitService;
  try {
    rateLimit = createRateLimitService({
      limitsDir: configDir,
      store: redis,
      logger: logger.child({ module: 'ratelimit' }),
    });
  } catch (err) {
    // Bad limits: the Redis client would otherwise keep reconnecting, and the process alive.
    void redis?.close();
    throw err;
  }
  modules.push(rateLimit);

  return { modules, auth, rateLimit, redis, bookingData };
}
