/**
 * @module test/bookings/database/migrations
 * The schema, on a real PostgreSQL: made in a schema of its own, recorded
 * per version, applied once however many processes start at once, seeded
 * within the start's budget while another process seeds, and a schema newer
 * than this Gatehouse knows refused rather than used.
 */
import assert from 'node:assert/strict';
import { Client } from 'pg';
import { MIGRATIONS, openBookingDatabase, SchemaTooNewError, type Booking } from '../../../src/bookings';
import { eventually, NO_BOUND_MS } from '../../support/polling';
import { sharedPostgres, type PostgresCluster } from '../../support/postgres';

const seeded: Booking = {
  id: 'dcc2eae2-d010-4a80-996b-4ef47cbea644',
  itemId: 'af14ed08-a000-4064-b436-ebb6b009dbc7',
  user: 'bob',
  status: 'cancelled',
  start: '2026-07-04',
  length: 5,
  createdAt: '2026-02-01T12:00:00.000Z',
  cancelledAt: '2026-02-03T12:00:00.000Z',
};

describe('bookings/database/migrations (PostgreSQL)', function () {
  let pg: PostgresCluster;
  before(async () => {
    pg = await sharedPostgres();
  });
  const nameOf = (url: string) => new URL(url).pathname.slice(1);

  it('applies every migration once when several processes open one database at once, and seeds once', async () => {
    const url = await pg.createDatabase('migrate');
    const dbs = await Promise.all(
      Array.from({ length: 5 }, () => openBookingDatabase({ databaseUrl: url, seed: { hotel: [seeded] } })),
    );
    try {
      const versions = await pg.query(
        nameOf(url),
        'SELECT version, name FROM gatehouse.schema_migrations ORDER BY version',
      );
      assert.deepEqual(
        versions,
        MIGRATIONS.map((m) => ({ version: m.version, name: m.name })),
      );
      const tables = await pg.query<{ table_name: string }>(
        nameOf(url),
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'gatehouse' ORDER BY 1",
      );
      assert.deepEqual(
        tables.map((t) => t.table_name),
        ['bookings', 'idempotency_keys', 'schema_migrations', 'seeds'],
      );
      assert.deepEqual(await pg.query(nameOf(url), 'SELECT count(*)::int AS n FROM gatehouse.bookings'), [{ n: 1 }]);
      // The seeded booking as the file had it, cancelled.
      assert.deepEqual(await dbs[0].store('hotel').get('bob', seeded.id), seeded);
    } finally {
      await Promise.all(dbs.map((db) => db.close()));
    }
    // Opened again: nothing to apply, nothing seeded again.
    const again = await openBookingDatabase({
      databaseUrl: url,
      seed: { hotel: [{ ...seeded, id: '00000000-0000-4000-8000-000000000001' }] },
    });
    await again.close();
    assert.deepEqual(await pg.query(nameOf(url), 'SELECT count(*)::int AS n FROM gatehouse.bookings'), [{ n: 1 }]);
  });

  it('waits past a request’s deadline, PostgreSQL’s statement_timeout included, for another process’s seeding to end, and seeds then', async () => {
    const url = await pg.createDatabase('seed-wait');
    await (await openBookingDatabase({ databaseUrl: url })).close();
    // Another process seeding: it holds the row of its kind until it commits.
    const other = new Client({ connectionString: url });
    await other.connect();
    const failed: string[] = [];
    let opening: ReturnType<typeof openBookingDatabase> | undefined;
    try {
      await other.query('BEGIN');
      await other.query("INSERT INTO gatehouse.seeds (kind) VALUES ('hotel')");
      const onCall = (operation: string, _seconds: number, failure?: string) =>
        void (failure && failed.push(`${operation}: ${failure}`));
      opening = openBookingDatabase({ databaseUrl: url, timeoutMs: 200, seed: { hotel: [seeded] }, onCall });
      await eventually(async () => {
        const [{ n }] = await pg.query<{ n: number }>(
          nameOf(url),
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'gatehouse' AND wait_event_type = 'Lock'",
        );
        return n === 1 ? true : undefined;
      }, 'the seeding to wait for the other');
      // Past its 200 ms: a timer set after its deadline's fires after it.
      await new Promise((resolve) => setTimeout(resolve, 600));
    } finally {
      await other.query('ROLLBACK');
      await other.end();
    }
    const db = await opening;
    await db.ready().finally(() => db.close());
    assert.deepEqual(failed, [], 'a call of the start failed');
    // Read through a database of no deadline: the 200 ms are for the start to wait past, not for this read.
    const reader = await openBookingDatabase({ databaseUrl: url, timeoutMs: NO_BOUND_MS });
    try {
      assert.deepEqual(await reader.store('hotel').get('bob', seeded.id), seeded);
    } finally {
      await reader.close();
    }
  });

  it('keeps its tables in the schema it is given, beside another Gatehouse’s', async () => {
    const url = await pg.createDatabase('schemas');
    const a = await openBookingDatabase({ databaseUrl: url, schema: 'tenant_a' });
    const b = await openBookingDatabase({ databaseUrl: url, schema: 'tenant_b' });
    try {
      await a.store('car').create({ itemId: seeded.itemId, user: 'bob', start: '2099-01-01', length: 1 });
      assert.equal((await a.store('car').list('bob')).length, 1);
      assert.deepEqual(await b.store('car').list('bob'), []);
    } finally {
      await a.close();
      await b.close();
    }
    await assert.rejects(
      openBookingDatabase({ databaseUrl: url, schema: 'Bad-Name' }),
      /the schema name must be a lower-case SQL identifier/,
    );
  });

  it('refuses a schema a later Gatehouse migrated, and leaves it as it is', async () => {
    const url = await pg.createDatabase('too_new');
    const db = await openBookingDatabase({ databaseUrl: url });
    await db.close();
    await pg.query(
      nameOf(url),
      "INSERT INTO gatehouse.schema_migrations (version, name) VALUES (99, 'from the future')",
    );
    await assert.rejects(openBookingDatabase({ databaseUrl: url }), (err: unknown) => {
      assert.ok(err instanceof SchemaTooNewError);
      assert.match(err.message, /^the schema gatehouse is at version 99, newer than this Gatehouse knows \(1\)/);
      return true;
    });
    assert.deepEqual(await pg.query(nameOf(url), 'SELECT max(version) AS v FROM gatehouse.schema_migrations'), [
      { v: 99 },
    ]);
  });
});
