/**
 * @module gatehouse/bookings
 * Where a Gatehouse keeps its bookings: the database the options name
 * (PostgreSQL, or PGlite in the data folder) opened, migrated and seeded
 * with the demo bookings of the folder's `bookings.yaml` once; or memory.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  BOOKINGS_FILE,
  loadBookingDataSync,
  openBookingDatabase,
  type BookingData,
  type BookingDatabase,
  type BookingDatabaseOptions,
  type BookingKind,
  type BookingStore,
  type PgliteCompiler,
} from '../bookings';
import type { Logger, Metrics } from '../telemetry';

export interface BookingStorageOptions {
  configDir: string;
  bookingStore: 'database' | 'memory';
  databaseUrl?: string;
  dataDir: string;
  databaseTimeoutMs: number;
  /** PGlite's shared buffers, in bytes; its default without. */
  pgliteSharedBuffers?: number;
  /** How V8 compiles PGlite's WebAssembly; its default without. */
  pgliteCompiler?: PgliteCompiler;
  /** The PGlite another thread holds open, for the workers of a gateway that share it. */
  sharedEngine?: BookingDatabaseOptions['sharedEngine'];
  /**
   * The folder's booking data as a folder check read it: the demo bookings
   * are seeded from it. Absent: `bookings.yaml` is read, when there is one.
   */
  data?: BookingData;
  /** The largest data file read, in bytes. Default 8 MiB. */
  fileSizeLimit?: number;
  /** Only these kinds are seeded (a booking service alone seeds its own). Default both. */
  kinds?: readonly BookingKind[];
  logger: Logger;
  metrics?: Pick<Metrics, 'recordDatabaseCall'>;
}

/** The stores of the booking modules, and the database behind them (none in memory: the modules keep their own). */
export interface BookingStorage {
  database?: BookingDatabase;
  stores?: Record<BookingKind, BookingStore>;
}

/** The options of the bookings database the storage options name, seeded from the config folder's `bookings.yaml` when there is one. */
export function bookingDatabaseOptions(
  options: BookingStorageOptions,
  logger: BookingDatabaseOptions['logger'],
): BookingDatabaseOptions {
  const data =
    options.data ??
    (existsSync(join(options.configDir, BOOKINGS_FILE))
      ? loadBookingDataSync(options.configDir, options.fileSizeLimit)
      : undefined);
  const kinds = options.kinds ?? ['hotel', 'car'];
  return {
    databaseUrl: options.databaseUrl,
    dataDir: options.dataDir,
    pglite: { sharedBuffers: options.pgliteSharedBuffers, compiler: options.pgliteCompiler },
    sharedEngine: options.sharedEngine,
    timeoutMs: options.databaseTimeoutMs,
    seed: data && {
      ...(kinds.includes('hotel') ? { hotel: data.hotel_bookings } : {}),
      ...(kinds.includes('car') ? { car: data.car_bookings } : {}),
    },
    logger,
    onCall:
      options.metrics &&
      ((operation, seconds, failure) => options.metrics!.recordDatabaseCall(operation, seconds, failure)),
  };
}

/** Opens the bookings database the options name, seeded from the config folder's `bookings.yaml` when there is one. */
export async function openBookingStorage(options: BookingStorageOptions): Promise<BookingStorage> {
  if (options.bookingStore === 'memory') return {};
  const database = await openBookingDatabase(
    bookingDatabaseOptions(options, options.logger.child({ module: 'bookings' })),
  );
  return { database, stores: { hotel: database.store('hotel'), car: database.store('car') } };
}
