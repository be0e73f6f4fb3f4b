/**
 * @module gatehouse/storage-words
 * Where the bookings are kept, in words, as the start line, diag and
 * check_ready say it. Apart from ./bookings, which opens the database: the
 * main thread of workers says it without loading the bookings.
 */
import { describeDatabaseUrl } from '../bookings/database/postgres';

/** Where bookings are kept, in words: `PGlite in /srv/data`, `PostgreSQL at postgres://gatehouse@db/gatehouse`, `memory`. */
export function describeStorage(options: {
  readonly bookingStore: 'database' | 'memory';
  readonly databaseUrl?: string;
  readonly dataDir: string;
}): string {
  if (options.bookingStore === 'memory') return 'memory';
  return options.databaseUrl !== undefined
    ? `PostgreSQL at ${describeDatabaseUrl(options.databaseUrl)}`
    : `PGlite in ${options.dataDir}`;
}
