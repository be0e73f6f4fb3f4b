/**
 * @module bookings/database
 * Where bookings are kept for good: PostgreSQL (`DATABASE_URL`), shared by
 * every process, or PGlite in a data folder (`GATEHOUSE_DATA`), the embedded
 * default; one schema and the same SQL for both.
 */
export {
  openBookingDatabase,
  DEFAULT_DATABASE_TIMEOUT_MS,
  type BookingDatabase,
  type BookingDatabaseOptions,
  type DatabaseFailure,
} from './database';
export { DatabaseUnavailableError } from './errors';
export { DataFolderInUseError } from './folder-lock';
export { DEFAULT_SCHEMA, MIGRATIONS, SchemaTooNewError, type Migration } from './migrations';
export { checkDatabaseUrl, describeDatabaseUrl } from './postgres';
