/**
 * @module gatehouse/bookings-on-demand
 * The bookings database of a whole Gatehouse, opened only when it is
 * wanted: once a Mapping routes to a booking module (at start, or by a
 * reload that adds one), or when the embedding app asks for it. A gateway
 * that routes nothing to bookings makes no data folder and locks none.
 *
 * Wanting it is quick (the folder made and locked, or the URL checked);
 * opening it (seconds: PGlite's WebAssembly, the migrations) begins once the
 * gateway serves, or at the first demand (`opened()`, a booking call,
 * readiness), and goes on in the background: on a core the gateway shares,
 * the opening would otherwise take its CPU from the start and delay the
 * first answers, which need no database. Meanwhile the booking modules'
 * stores answer as a database that is down does (a 503 with Retry-After),
 * and readiness says it is opening; once open, they call it.
 */
import {
  DatabaseUnavailableError,
  reserveBookingDatabase,
  type BookingDatabase,
  type BookingKind,
  type BookingStore,
  type ReservedBookingDatabase,
} from '../bookings';
import type { GatewayConfig, ModuleRegistry } from '../gateway';
import { errorText } from '../files';
import { bookingDatabaseOptions, type BookingStorageOptions } from './bookings';

/** Where the bookings database is: not wanted (yet), opening, open, or failed to open. */
export type BookingsState = 'none' | 'opening' | 'open' | 'failed';

/** A Gatehouse's bookings database, opened when wanted. */
export interface BookingsOnDemand {
  /** What the booking modules keep their bookings in: undefined with `bookingStore: 'memory'` (each its own). */
  readonly stores: Record<BookingKind, BookingStore> | undefined;
  /** The database once open. */
  readonly database: BookingDatabase | undefined;
  readonly state: BookingsState;
  /**
   * Reserves the database unless that was done, and begins opening it once
   * the gateway serves ({@link serving}); resolves once it is reserved, and
   * rejects when it cannot be (a folder another process holds, one that
   * cannot be made).
   */
  want(): Promise<void>;
  /** The gateway serves: a database wanted begins to open now, and one wanted later at once. */
  serving(): void;
  /** Wants it, and resolves it once open; undefined with `bookingStore: 'memory'`. Rejects when it cannot be opened. */
  opened(): Promise<BookingDatabase | undefined>;
  /** Readiness: resolves when it is not wanted or answers; rejects saying why not (opening, failed, down). */
  ready(): Promise<void>;
  /** Closes it, once an opening under way has ended. */
  close(): Promise<void>;
}

/** Whether a Mapping of `config` routes to a booking module of `modules`, as the route table resolves a service (gateway/upstream/endpoints/targets). */
export function routesToBookings(config: GatewayConfig, modules: ModuleRegistry, bookings: readonly object[]): boolean {
  return config.mappings.some((m) => m.namespace === undefined && bookings.includes(modules.get(m.service) as object));
}

/** A store of `kind` that calls the database once it is open, and answers as an unavailable one until then. */
function storeOnceOpen(
  kind: BookingKind,
  current: () => BookingDatabase | undefined,
  why: () => DatabaseUnavailableError,
) {
  const store = (): BookingStore => {
    const database = current();
    if (database === undefined) throw why();
    return database.store(kind);
  };
  return {
    get: async (user, id, options) => store().get(user, id, options),
    list: async (user, options) => store().list(user, options),
    create: async (draft, options) => store().create(draft, options),
    cancel: async (user, id, options) => store().cancel(user, id, options),
  } satisfies BookingStore;
}

/** The bookings database the options name, opened on demand. */
export function bookingsOnDemand(options: BookingStorageOptions): BookingsOnDemand {
  if (options.bookingStore === 'memory') {
    return {
      stores: undefined,
      database: undefined,
      state: 'none',
      want: async () => undefined,
      serving: () => undefined,
      opened: async () => undefined,
      ready: async () => undefined,
      close: async () => undefined,
    };
  }
  const logger = options.logger.child({ module: 'bookings' });
  let state: BookingsState = 'none';
  let reserving: Promise<ReservedBookingDatabase> | undefined;
  let opening: Promise<BookingDatabase> | undefined;
  let database: BookingDatabase | undefined;
  let failure: string | undefined;
  let closing: Promise<void> | undefined;
  let mayOpen = false;

  /** Begins opening the reserved database, unless it is opening or open; resolves it once open. */
  const open = (reserved: ReservedBookingDatabase): Promise<BookingDatabase> => {
    if (opening) return opening;
    const made = reserved.open();
    opening = made;
    made.then(
      (db) => {
        database = db;
        state = 'open';
        logger.info({ database: `${db.engine} (${db.location})` }, 'the bookings database is open');
      },
      (err: unknown) => {
        failure = errorText(err);
        state = 'failed';
        // The next want (a reload, the embedding app) reserves it again and tries again.
        reserving = opening = undefined;
        logger.error({ err: failure }, 'the bookings database could not be opened: bookings answer 503');
      },
    );
    return made;
  };

  /** A demand for the database while it is reserved and not yet opening: it begins to open. */
  const demand = () => {
    if (state === 'opening' && opening === undefined && closing === undefined)
      void reserving?.then(open).catch(() => undefined);
  };

  const why = () => {
    demand();
    return state === 'failed'
      ? new DatabaseUnavailableError('unavailable', `the bookings database could not be opened: ${failure}`)
      : state === 'opening'
        ? new DatabaseUnavailableError('opening', 'the bookings database is opening')
        : new DatabaseUnavailableError(
            'unavailable',
            'the bookings database is not opened: no Mapping routes to a booking service',
          );
  };

  const want = async (): Promise<void> => {
    if (closing) throw new Error('the bookings database is closed');
    if (reserving === undefined) {
      const made = reserveBookingDatabase(bookingDatabaseOptions(options, logger));
      reserving = made;
      made.then(
        (reserved) => {
          if (reserving !== made) return;
          state = 'opening';
          if (mayOpen && closing === undefined) void open(reserved).catch(() => undefined);
        },
        // Not reserved: a later want (a reload) tries again.
        () => {
          if (reserving === made) reserving = undefined;
        },
      );
    }
    await reserving;
  };

  return {
    stores: {
      hotel: storeOnceOpen('hotel', () => database, why),
      car: storeOnceOpen('car', () => database, why),
    },
    get database() {
      return database;
    },
    get state() {
      return state;
    },
    want,
    serving() {
      mayOpen = true;
      demand();
    },
    async opened() {
      await want();
      return open(await reserving!);
    },
    async ready() {
      if (state === 'none') return;
      if (database === undefined) throw new Error(why().reason);
      await database.ready();
    },
    close() {
      closing ??= (async () => {
        const reserved = await reserving?.catch(() => undefined);
        if (opening === undefined) return reserved?.release();
        const db = await opening.catch(() => undefined);
        await db?.close();
      })();
      return closing;
    },
  };
}
