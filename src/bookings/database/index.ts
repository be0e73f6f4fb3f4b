/**
 * @module bookings/database
 * Where bookings are kept for good: PostgreSQL (`DATABASE_URL`), shared by
 * every process, or PGlite in a data folder (`GATEHOUSE_DATA`), the embedded
 * default; one schema and the same SQL for both.
 */
export {
  openBookingDatabase,
  reserveBookingDatabase,
  DEFAULT_DATABASE_TIMEOUT_MS,
  type BookingDatabase,
  type BookingDatabaseOptions,
  type ReservedBookingDatabase,
} from './database';
export type { DatabaseFailure } from './calls';
export {
  DEFAULT_PGLITE_COMPILER,
  DEFAULT_PGLITE_SHARED_BUFFERS,
  MIN_PGLITE_SHARED_BUFFERS,
  type PgliteCompiler,
  type PgliteSettings,
} from './pglite-settings';
export { openPgliteEngine, pgliteEngineOverPort, type PgliteEngine } from './pglite';
export { reservePgliteFolder, type ReservedFolder } from './pglite-folder';
export type { Engine } from './engine';
export { DatabaseUnavailableError } from './errors';
export { DataFolderInUseError } from './folder-lock';
export { DEFAULT_SCHEMA, MIGRATIONS, SchemaTooNewError, type Migration } from './migrations';
export { checkDatabaseUrl, describeDatabaseUrl } from './postgres';
