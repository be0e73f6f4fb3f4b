/**
 * @module bookings
 * The hotel and car booking services: catalogues, and bookings that belong to
 * the user the gateway names in `X-Travel-User`. One implementation, with the
 * kind of item as a parameter.
 */
export {
  createBookingModule,
  createHotelBookingModule,
  createCarBookingModule,
  type BookingModule,
  type BookingModuleOptions,
} from './module';
export {
  createBookingApp,
  catalogueOf,
  normaliseBasePath,
  USER_HEADER,
  DEFAULT_BOOKING_BODY_LIMIT,
  type BookingAppOptions,
  type Catalogue,
} from './app';
export {
  loadBookingData,
  loadBookingDataSync,
  parseBookingData,
  parseBookingFile,
  BookingDataError,
  BOOKINGS_FILE,
  type BookingData,
} from './data';
export {
  createMemoryBookingStore,
  IDEMPOTENCY_KEY_TTL_MS,
  type BookingStore,
  type CreateOptions,
  type Created,
  type MemoryBookingStoreOptions,
} from './store';
export type { Booking, BookingDraft, BookingStatus } from './types';
export { idempotencyKeyOf, IdempotencyKeyInFlight, IdempotencyKeyReused, IDEMPOTENCY_KEY_HEADER } from './idempotency';
export {
  openBookingDatabase,
  reserveBookingDatabase,
  checkDatabaseUrl,
  describeDatabaseUrl,
  DatabaseUnavailableError,
  DataFolderInUseError,
  SchemaTooNewError,
  DEFAULT_DATABASE_TIMEOUT_MS,
  DEFAULT_SCHEMA,
  MIGRATIONS,
  type BookingDatabase,
  type BookingDatabaseOptions,
  type DatabaseFailure,
  type Migration,
  type ReservedBookingDatabase,
  DEFAULT_PGLITE_COMPILER,
  DEFAULT_PGLITE_SHARED_BUFFERS,
  MIN_PGLITE_SHARED_BUFFERS,
  type PgliteCompiler,
  type PgliteSettings,
  openPgliteEngine,
  pgliteEngineOverPort,
  type Engine,
  type PgliteEngine,
  reservePgliteFolder,
  type ReservedFolder,
} from './database';
export { KINDS, BOOKING_KINDS, kindSpec, type BookingKind, type CatalogueItem, type KindSpec } from './kinds';
