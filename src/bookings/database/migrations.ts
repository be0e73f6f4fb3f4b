/**
 * @module bookings/database/migrations
 * The bookings' schema, in versioned migrations applied at start: each in
 * its own transaction, recorded in `schema_migrations`, under an advisory
 * lock so that processes starting at once apply each exactly once.
 */
import type { Sql } from './engine';

/** The schema of the bookings' tables unless told otherwise. */
export const DEFAULT_SCHEMA = 'gatehouse';

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** Throws unless `schema` is a plain lower-case SQL identifier (it is written into the SQL, unquoted). */
export function checkSchemaName(schema: string): void {
  if (!IDENTIFIER.test(schema))
    throw new Error(`the schema name must be a lower-case SQL identifier (letters, digits, _), not '${schema}'`);
}

export interface Migration {
  readonly version: number;
  readonly name: string;
  /** The statements, `{schema}` standing for the schema's name. */
  readonly sql: string;
}

/** Every migration, in order. Never edit one that was released: add the next. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'bookings, idempotency keys and seeds',
    sql: `
      CREATE TABLE {schema}.bookings (
        seq          bigint GENERATED ALWAYS AS IDENTITY,
        id           uuid PRIMARY KEY,
        kind         text NOT NULL CHECK (kind IN ('hotel', 'car')),
        owner        text NOT NULL,
        item_id      uuid NOT NULL,
        status       text NOT NULL CHECK (status IN ('confirmed', 'cancelled')),
        start_day    date NOT NULL,
        length       integer NOT NULL CHECK (length > 0),
        created_at   timestamptz NOT NULL,
        cancelled_at timestamptz,
        CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL))
      );
      CREATE INDEX bookings_by_owner ON {schema}.bookings (kind, owner, seq);
      CREATE TABLE {schema}.idempotency_keys (
        kind       text NOT NULL,
        owner      text NOT NULL,
        key        text NOT NULL,
        booking_id uuid NOT NULL REFERENCES {schema}.bookings (id),
        created_at timestamptz NOT NULL,
        PRIMARY KEY (kind, owner, key)
      );
      CREATE INDEX idempotency_keys_by_age ON {schema}.idempotency_keys (created_at);
      CREATE TABLE {schema}.seeds (
        kind      text PRIMARY KEY,
        seeded_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
];

/** A database whose schema is newer than this Gatehouse knows. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly schema: string,
    readonly version: number,
    readonly known: number,
  ) {
    super(
      `the schema ${schema} is at version ${version}, newer than this Gatehouse knows (${known}): ` +
        'it was migrated by a later Gatehouse; run that version or a later one',
    );
    this.name = 'SchemaTooNewError';
  }
}

/**
 * Brings `schema` up to the last migration, on one connection (`sql`): the
 * session holds an advisory lock keyed by the schema's name meanwhile, so a
 * second process starting at once waits, then finds nothing left to do.
 * Resolves the versions it applied.
 * @throws {SchemaTooNewError} when the schema is ahead of {@link MIGRATIONS}.
 */
export async function migrate(
  sql: Sql,
  schema: string,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  checkSchemaName(schema);
  const lockKey = `gatehouse migrations ${schema}`;
  // Waiting for another process's migrations is no slow statement.
  await sql.query('SET statement_timeout TO 0');
  await sql.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [lockKey]);
  try {
    await sql.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await sql.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
         version    integer PRIMARY KEY,
         name       text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const rows = await sql.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations`);
    const applied = new Set(rows.map((r) => Number(r.version)));
    const known = migrations.length === 0 ? 0 : migrations[migrations.length - 1].version;
    const newest = Math.max(0, ...applied);
    if (newest > known) throw new SchemaTooNewError(schema, newest, known);
    const done: number[] = [];
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      await sql.transaction(async (tx) => {
        for (const statement of statementsOf(m.sql.split('{schema}').join(schema))) await tx.query(statement);
        await tx.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
      });
      done.push(m.version);
    }
    return done;
  } finally {
    // On a connection that is gone, the lock went with it.
    await sql.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockKey]).catch(() => undefined);
    await sql.query('RESET statement_timeout').catch(() => undefined);
  }
}

/** The statements of a migration, one a `;` (migrations hold no `;` inside a statement). */
function statementsOf(text: string): string[] {
  return text
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
