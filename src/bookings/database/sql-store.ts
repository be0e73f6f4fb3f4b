/**
 * @module bookings/database/sql-store
 * The booking store of one kind in SQL, the same for PostgreSQL and PGlite.
 * Every statement names the kind and the owner, so that no read or write
 * reaches another user's booking; a create with an `Idempotency-Key` and a
 * cancel are each one transaction.
 */
import { randomUUID } from 'node:crypto';
import { IdempotencyKeyInFlight, IdempotencyKeyReused, sameRequest } from '../idempotency';
import type { BookingKind } from '../kinds';
import { IDEMPOTENCY_KEY_TTL_MS, type BookingStore, type Created } from '../store';
import type { Booking, BookingDraft } from '../types';
import type { Row, Sql } from './engine';
import type { TraceParent } from '../../tracing';

/**
 * Runs one call on the database: see BookingDatabase. `write` waits for the
 * commit to be on disk; `timeoutMs` replaces the database's deadline for
 * this call.
 */
export type Runner = <T>(
  operation: string,
  work: (sql: Sql) => Promise<T>,
  options?: { write?: boolean; timeoutMs?: number; trace?: TraceParent },
) => Promise<T>;

export interface SqlStoreOptions {
  kind: BookingKind;
  schema: string;
  run: Runner;
  /** The clock, for `createdAt`, `cancelledAt` and the age of keys. */
  now?: () => Date;
  /** Makes ids; must return lower-case UUIDs. */
  newId?: () => string;
  idempotencyKeyTtlMs?: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Text in the shapes the memory store keeps, whichever driver reads it.
const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
/** The columns of a booking, of the table aliased `t` (`b.`) or unaliased (``). */
const columns = (
  t: string,
) => `${t}id::text AS id, ${t}item_id::text AS item_id, ${t}owner AS owner, ${t}status AS status,
  to_char(${t}start_day, 'YYYY-MM-DD') AS start_day, ${t}length AS length,
  to_char(${t}created_at AT TIME ZONE 'UTC', ${ISO}) AS created_at, to_char(${t}cancelled_at AT TIME ZONE 'UTC', ${ISO}) AS cancelled_at`;
const COLUMNS = columns('');

interface BookingRow extends Row {
  id: string;
  item_id: string;
  owner: string;
  status: Booking['status'];
  start_day: string;
  length: number;
  created_at: string;
  cancelled_at: string | null;
}

function bookingOf(row: BookingRow): Booking {
  return Object.freeze({
    id: row.id,
    itemId: row.item_id,
    user: row.owner,
    status: row.status,
    start: row.start_day,
    length: Number(row.length),
    createdAt: row.created_at,
    ...(row.cancelled_at === null ? {} : { cancelledAt: row.cancelled_at }),
  });
}

/** The store of one kind's bookings in `schema` (migrated: see ./migrations). */
export function createSqlBookingStore(options: SqlStoreOptions): BookingStore & {
  seed(bookings: readonly Booking[], seedOptions?: { timeoutMs?: number }): Promise<boolean>;
} {
  const { kind, schema, run } = options;
  const now = options.now ?? (() => new Date());
  const newId = options.newId ?? randomUUID;
  const keyTtlMs = options.idempotencyKeyTtlMs ?? IDEMPOTENCY_KEY_TTL_MS;
  const bookings = `${schema}.bookings`;
  const keys = `${schema}.idempotency_keys`;

  /** Inserts a confirmed booking under a fresh id; another id when the one drawn is taken. */
  async function insert(sql: Sql, draft: BookingDraft, createdAt: string): Promise<Booking> {
    for (let tries = 0; tries < 5; tries++) {
      const rows = await sql.query<BookingRow>(
        `INSERT INTO ${bookings} (id, kind, owner, item_id, status, start_day, length, created_at)
         VALUES ($1::uuid, $2, $3, $4::uuid, 'confirmed', $5::date, $6, $7::timestamptz)
         ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}`,
        [newId(), kind, draft.user, draft.itemId, draft.start, draft.length, createdAt],
      );
      if (rows.length === 1) return bookingOf(rows[0]);
    }
    throw new Error('the id generator keeps returning ids that are taken');
  }

  async function createWithKey(
    sql: Sql,
    draft: BookingDraft,
    key: string,
    at: Date,
    admit: (() => void) | undefined,
  ): Promise<Created> {
    // Held until the transaction ends: a retry arriving meanwhile is told the first is still being made.
    const [{ free }] = await sql.query<{ free: boolean }>(
      'SELECT pg_try_advisory_xact_lock(hashtext($1), hashtext($2)) AS free',
      [`${kind}:${draft.user}`, key],
    );
    if (!free) throw new IdempotencyKeyInFlight(key);
    const earlier = await sql.query<BookingRow>(
      `SELECT ${columns('b.')}
       FROM ${keys} k JOIN ${bookings} b ON b.id = k.booking_id
       WHERE k.kind = $1 AND k.owner = $2 AND k.key = $3 AND k.created_at > $4::timestamptz`,
      [kind, draft.user, key, new Date(at.getTime() - keyTtlMs).toISOString()],
    );
    if (earlier.length === 1) {
      const made = bookingOf(earlier[0]);
      if (!sameRequest(made, draft)) throw new IdempotencyKeyReused(key);
      return { booking: made, replayed: true };
    }
    admit?.();
    const booking = await insert(sql, draft, at.toISOString());
    // An expired key of the same name is replaced.
    await sql.query(
      `INSERT INTO ${keys} (kind, owner, key, booking_id, created_at) VALUES ($1, $2, $3, $4::uuid, $5::timestamptz)
       ON CONFLICT (kind, owner, key) DO UPDATE SET booking_id = EXCLUDED.booking_id, created_at = EXCLUDED.created_at`,
      [kind, draft.user, key, booking.id, at.toISOString()],
    );
    return { booking, replayed: false };
  }

  const select = (sql: Sql, user: string, id: string) =>
    sql.query<BookingRow>(`SELECT ${COLUMNS} FROM ${bookings} WHERE kind = $1 AND owner = $2 AND id = $3::uuid`, [
      kind,
      user,
      id,
    ]);

  return {
    async get(user, id, callOptions) {
      if (!UUID.test(id)) return undefined;
      const rows = await run('get', (sql) => select(sql, user, id.toLowerCase()), { trace: callOptions?.trace });
      return rows.length === 1 ? bookingOf(rows[0]) : undefined;
    },
    async list(user, callOptions) {
      const rows = await run(
        'list',
        (sql) =>
          sql.query<BookingRow>(`SELECT ${COLUMNS} FROM ${bookings} WHERE kind = $1 AND owner = $2 ORDER BY seq`, [
            kind,
            user,
          ]),
        { trace: callOptions?.trace },
      );
      return rows.map(bookingOf);
    },
    async create(draft, createOptions = {}) {
      const at = now();
      const key = createOptions.idempotencyKey;
      if (key === undefined) {
        createOptions.admit?.();
        return run(
          'create',
          async (sql) => ({ booking: await insert(sql, draft, at.toISOString()), replayed: false }),
          { write: true, trace: createOptions.trace },
        );
      }
      return run('create', (sql) => sql.transaction((tx) => createWithKey(tx, draft, key, at, createOptions.admit)), {
        write: true,
        trace: createOptions.trace,
      });
    },
    async cancel(user, id, callOptions) {
      if (!UUID.test(id)) return undefined;
      const rows = await run(
        'cancel',
        (sql) =>
          sql.transaction(async (tx) => {
            // Of two cancels at once, the second waits for the first's row lock, then finds it cancelled and changes nothing.
            const changed = await tx.query<BookingRow>(
              `UPDATE ${bookings} SET status = 'cancelled', cancelled_at = $4::timestamptz
               WHERE kind = $1 AND owner = $2 AND id = $3::uuid AND status = 'confirmed' RETURNING ${COLUMNS}`,
              [kind, user, id.toLowerCase(), now().toISOString()],
            );
            return changed.length === 1 ? changed : select(tx, user, id.toLowerCase());
          }),
        { write: true, trace: callOptions?.trace },
      );
      return rows.length === 1 ? bookingOf(rows[0]) : undefined;
    },
    /**
     * Inserts `seeded` the first time this kind is seeded in this schema, and
     * never again (a booking since cancelled stays cancelled, one deleted
     * stays deleted). Resolves whether it inserted them. `timeoutMs` is the
     * deadline of the whole call, PostgreSQL's statement_timeout included.
     */
    seed(seeded, seedOptions = {}) {
      const { timeoutMs } = seedOptions;
      return run(
        'seed',
        (sql) =>
          sql.transaction(async (tx) => {
            // Another process seeding at once holds the row until it commits: waiting for it is no slow statement.
            if (timeoutMs !== undefined)
              await tx.query("SELECT set_config('statement_timeout', $1, true)", [String(timeoutMs)]);
            const first = await tx.query(
              `INSERT INTO ${schema}.seeds (kind) VALUES ($1) ON CONFLICT (kind) DO NOTHING RETURNING kind`,
              [kind],
            );
            if (first.length === 0) return false;
            for (const b of seeded) {
              await tx.query(
                `INSERT INTO ${bookings} (id, kind, owner, item_id, status, start_day, length, created_at, cancelled_at)
                 VALUES ($1::uuid, $2, $3, $4::uuid, $5, $6::date, $7, $8::timestamptz, $9::timestamptz) ON CONFLICT (id) DO NOTHING`,
                [b.id, kind, b.user, b.itemId, b.status, b.start, b.length, b.createdAt, b.cancelledAt ?? null],
              );
            }
            return true;
          }),
        { write: true, timeoutMs },
      );
    },
  };
}
