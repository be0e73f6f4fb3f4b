/**
 * @module bookings/database/database
 * The bookings' database: PostgreSQL when a URL is given, else PGlite in a
 * data folder; migrated and seeded at start; every call within a deadline,
 * timed and counted; its outages logged once each way, and told to
 * `check_ready` (./calls). A PostgreSQL that cannot be reached at start is tried again
 * until it can: the gateway serves everything else meanwhile, and bookings
 * answer 503.
 */
import type { Logger } from '../../telemetry';
import type { BookingKind } from '../kinds';
import { IDEMPOTENCY_KEY_TTL_MS, type BookingStore } from '../store';
import type { Booking } from '../types';
import { databaseCalls, type DatabaseFailure } from './calls';
import type { Engine } from './engine';
import { DatabaseUnavailableError, errorText, isUnavailable } from './errors';
import { checkSchemaName, DEFAULT_SCHEMA, migrate } from './migrations';
import { openPgliteEngine } from './pglite';
import { reservePgliteFolder } from './pglite-folder';
import type { PgliteSettings } from './pglite-settings';
import { checkDatabaseUrl, createPostgresEngine } from './postgres';
import { createSqlBookingStore, type Runner } from './sql-store';

/** How long a call may take, waiting for a connection included, before it is answered 503: 5 s. */
export const DEFAULT_DATABASE_TIMEOUT_MS = 5000;

/** How long `check_ready` waits for the database to answer. */
const READY_TIMEOUT_MS = 1000;

/**
 * How long the migrations, and the seeding that follows them, may take at
 * start (another process's included, when it migrates first): a first start
 * on a slow or busy disk may wait seconds for its writes to be synced, and a
 * start that fails over it refuses to serve anything.
 */
const PREPARE_TIMEOUT_MS = 120_000;

/** How often expired idempotency keys are deleted. */
const PURGE_INTERVAL_MS = 3_600_000;

export interface BookingDatabaseOptions {
  /** A `postgres://` URL: bookings in that PostgreSQL. Without it, PGlite in `dataDir`. */
  databaseUrl?: string;
  /** PGlite's data folder, made if need be; needed without `databaseUrl`. */
  dataDir?: string;
  /** PGlite's memory settings and compiler. */
  pglite?: PgliteSettings;
  /**
   * The database another thread holds (a gateway's workers share one
   * PGlite), used instead of `databaseUrl` and `dataDir`: reserves it,
   * rejecting as a folder in use does, and resolves how to open this
   * thread's connection to it. Closing closes this thread's part alone.
   */
  sharedEngine?: () => Promise<() => Promise<Engine>>;
  /** The schema of the tables. Default `gatehouse`. */
  schema?: string;
  /** Longest a call may take, in ms. Default {@link DEFAULT_DATABASE_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Bookings to insert the first time each kind is seeded in this database (the demo's), never again. */
  seed?: Partial<Record<BookingKind, readonly Booking[]>>;
  /** Where the migrations, the seeding and the outages are logged. */
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Hears every call: its operation (`get`, `list`, `create`, `cancel`, `seed`, `migrate`, `ready`, `purge`), duration and failure. */
  onCall?: (operation: string, seconds: number, failure?: DatabaseFailure) => void;
  /** The stores' clock. */
  now?: () => Date;
  /** Makes ids; must return lower-case UUIDs. Default `crypto.randomUUID`. */
  newId?: () => string;
  /** How long an `Idempotency-Key` is remembered. Default 24 h. */
  idempotencyKeyTtlMs?: number;
}

/** An open bookings database. */
export interface BookingDatabase {
  readonly engine: 'PostgreSQL' | 'PGlite';
  /** The URL without its password, or the data folder. */
  readonly location: string;
  /** The store of one kind's bookings. */
  store(kind: BookingKind): BookingStore;
  /** Resolves while the database is migrated and answers; rejects with why not, never naming the password. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

const quiet: Pick<Logger, 'info' | 'warn' | 'error'> = { info() {}, warn() {}, error() {} };

/** A bookings database reserved for this process, not opened yet. */
export interface ReservedBookingDatabase {
  /**
   * Opens it: PGlite's thread started (the ready-made database put in the
   * folder on a first start), migrated and seeded, or this rejects and the
   * folder is unlocked; PostgreSQL migrated once it can be reached.
   */
  open(): Promise<BookingDatabase>;
  /** Gives the reservation up unopened: the folder is unlocked. */
  release(): Promise<void>;
  /**
   * PGlite's folder holds no database yet: opening it begins by putting
   * the ready-made one there, which waits on the disk more than it takes
   * the CPU. False for PostgreSQL and for a database another thread holds.
   */
  readonly empty: boolean;
}

/**
 * Reserves the bookings database the options name, at once: the options
 * checked, and for PGlite the data folder made and locked, so that a
 * folder another process holds is said before anything else is done.
 * Opening it (seconds) is {@link ReservedBookingDatabase.open}.
 */
export async function reserveBookingDatabase(options: BookingDatabaseOptions): Promise<ReservedBookingDatabase> {
  checkSchemaName(options.schema ?? DEFAULT_SCHEMA);
  const timeoutMs = options.timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1)
    throw new RangeError(`the database timeout must be a whole number of ms (1 or more), got ${timeoutMs}`);
  const logger = options.logger ?? quiet;
  const shared = options.sharedEngine;
  if (shared !== undefined) {
    const connect = await shared();
    return {
      open: async () => preparedDatabase(await connect(), options),
      release: async () => undefined,
      empty: false,
    };
  }
  if (options.databaseUrl !== undefined) {
    const url = options.databaseUrl;
    checkDatabaseUrl(url, 'the database URL');
    return {
      open: () => preparedDatabase(createPostgresEngine({ url, statementTimeoutMs: timeoutMs }), options),
      release: async () => undefined,
      empty: false,
    };
  }
  if (options.dataDir === undefined) throw new Error('the bookings database needs a PostgreSQL URL or a data folder');
  const folder = await reservePgliteFolder(options.dataDir);
  return {
    open: async () => preparedDatabase(await openPgliteEngine({ folder, settings: options.pglite, logger }), options),
    release: () => folder.release(),
    empty: !folder.holdsDatabase,
  };
}

/**
 * Opens the bookings database. PGlite: the folder is made, locked, migrated
 * and seeded, or this rejects. PostgreSQL: a URL that cannot be read
 * rejects; a server that cannot be reached is logged and tried again.
 */
export async function openBookingDatabase(options: BookingDatabaseOptions): Promise<BookingDatabase> {
  return (await reserveBookingDatabase(options)).open();
}

/** The database on `engine`, migrated and seeded (PostgreSQL: once it answers). */
async function preparedDatabase(engine: Engine, options: BookingDatabaseOptions): Promise<BookingDatabase> {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const timeoutMs = options.timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
  const logger = options.logger ?? quiet;
  const where = `${engine.name} (${engine.location})`;

  let prepared = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let purge: NodeJS.Timeout | undefined;
  const calls = databaseCalls({ engine, schema, where, logger, onCall: options.onCall });
  const { call, lost, regained } = calls;

  const run: Runner = (operation, work, runOptions = {}) => {
    if (closed) return Promise.reject(new DatabaseUnavailableError('unavailable', 'the bookings database is closed'));
    if (!prepared)
      return Promise.reject(
        new DatabaseUnavailableError('unavailable', `not migrated yet: ${calls.down ?? 'starting'}`),
      );
    return call(operation, work, runOptions.write ?? false, runOptions.timeoutMs ?? timeoutMs, runOptions.trace);
  };

  const stores = new Map<BookingKind, ReturnType<typeof createSqlBookingStore>>();
  const storeOf = (kind: BookingKind) => {
    let store = stores.get(kind);
    if (!store) {
      store = createSqlBookingStore({
        kind,
        schema,
        run,
        now: options.now,
        newId: options.newId,
        idempotencyKeyTtlMs: options.idempotencyKeyTtlMs,
      });
      stores.set(kind, store);
    }
    return store;
  };

  /** Migrates, then seeds each kind that has seed bookings, both within the start's budget rather than a request's. */
  async function prepare(): Promise<void> {
    const prepareMs = Math.max(timeoutMs, PREPARE_TIMEOUT_MS);
    const applied = await call('migrate', (sql) => migrate(sql, schema), false, prepareMs);
    if (applied.length > 0) logger.info({ database: where, schema, versions: applied }, 'bookings database migrated');
    prepared = true;
    for (const [kind, bookings] of Object.entries(options.seed ?? {}) as [BookingKind, readonly Booking[]][]) {
      if (bookings.length > 0 && (await storeOf(kind).seed(bookings, { timeoutMs: prepareMs }))) {
        logger.info({ database: where, kind, bookings: bookings.length }, 'demo bookings inserted');
      }
    }
    if (closed) return;
    purge = setInterval(() => {
      const cutoff = new Date(
        (options.now?.() ?? new Date()).getTime() - (options.idempotencyKeyTtlMs ?? IDEMPOTENCY_KEY_TTL_MS),
      ).toISOString();
      run('purge', (sql) =>
        sql.query(`DELETE FROM ${schema}.idempotency_keys WHERE created_at < $1::timestamptz`, [cutoff]),
      ).catch((err: unknown) =>
        logger.warn(
          { database: where, err: errorText(err) },
          'expired idempotency keys could not be deleted; trying again later',
        ),
      );
    }, PURGE_INTERVAL_MS);
    purge.unref();
  }

  /** Prepares again and again, waiting longer each time up to 5 s, until it is done or the database closed. */
  function prepareLater(delayMs: number): void {
    retry = setTimeout(() => {
      prepare().then(
        () => regained(),
        (err: unknown) => {
          prepared = false;
          if (!isUnavailable(err)) lost(errorText(err));
          if (!closed) prepareLater(Math.min(delayMs * 2, 5000));
        },
      );
    }, delayMs);
  }

  try {
    await prepare();
  } catch (err) {
    prepared = false;
    // A server not there yet (started alongside, restarting) is waited for; anything else is a mistake to report now.
    if (engine.name === 'PGlite' || !(err instanceof DatabaseUnavailableError)) {
      await engine.close();
      throw err;
    }
    prepareLater(250);
  }

  return {
    engine: engine.name,
    location: engine.location,
    store: storeOf,
    async ready() {
      if (closed) throw new Error(`${where} is closed`);
      if (!prepared) throw new Error(`${where} is not ready: ${calls.down ?? 'migrating'}`);
      // PGlite is in this process: open is ready, and a probe must not queue behind a burst of writes.
      if (engine.name === 'PGlite') return;
      try {
        await call('ready', (sql) => sql.query('SELECT 1'), false, Math.min(timeoutMs, READY_TIMEOUT_MS));
      } catch (err) {
        throw new Error(
          `${where} is unavailable: ${err instanceof DatabaseUnavailableError ? err.reason : errorText(err)}`,
        );
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(retry);
      clearInterval(purge);
      await engine.close();
    },
  };
}
