/**
 * @module test/bookings/database/wal-full
 * The embedded database when its write-ahead log cannot grow: a disk full
 * at the moment Postgres needs a new WAL segment is a PANIC, after which
 * that PGlite answers nothing more. Every call is then an outage answered
 * at once (a 503 to its client), never a wait for the deadline, and the
 * database opens again, recovered from its WAL, once there is room.
 */
import assert from 'node:assert/strict';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { openPgliteEngine } from '../../../src/bookings/database/pglite';
import { DatabaseUnavailableError } from '../../../src/bookings/database/errors';
import type { Engine } from '../../../src/bookings/database/engine';
import { pgliteTemplate } from '../../support/pglite';
import { mountSmallDisk, type SmallDisk } from '../../support/small-disk';

/** A WAL record of 64 KiB that touches no table: what fills the WAL's segment, and nothing else. */
const WAL_RECORD = "select pg_logical_emit_message(true, 'gatehouse-test', repeat('x', 65536))";
/** Long enough never to be what ends a call here, on a loaded machine too. */
const DEADLINE_MS = 120_000;

describe('bookings/database: the embedded database when its write-ahead log cannot grow', function () {
  let disk: SmallDisk | undefined;
  let engine: Engine | undefined;
  afterEach(async () => {
    await engine?.close();
    disk?.unmount();
  });

  it('answers each call as an outage, before its deadline, and opens again once there is room', async function () {
    disk = mountSmallDisk(this, '96m');
    const folder = join(disk.dir, 'data');
    await cp(await pgliteTemplate(), folder, { recursive: true });
    engine = await openPgliteEngine({ folder });
    const open = engine;
    const run = (text: string) => open.session((sql) => sql.query(text), DEADLINE_MS);
    await run('select 1');
    // No room for the next WAL segment (16 MiB): the current one fills within a few hundred records.
    disk.fill(1024 * 1024);
    let failure: unknown;
    for (let i = 0; i < 1000 && failure === undefined; i++) await run(WAL_RECORD).catch((err) => (failure = err));
    assert.ok(failure instanceof DatabaseUnavailableError, `an outage: ${String(failure)}`);
    assert.equal(failure.kind, 'unavailable');
    assert.match(failure.reason, /No space left on device/);

    // The database that PANICked is let go: the next calls fail as outages, not as waits for the deadline.
    for (let i = 0; i < 2; i++) {
      const next = await run('select 1').catch((err: unknown) => err);
      assert.ok(next instanceof DatabaseUnavailableError, String(next));
      assert.equal(next.kind, 'unavailable');
    }

    disk.freeBallast();
    let rows: unknown;
    for (let i = 0; i < 20 && rows === undefined; i++) rows = await run('select 1 as one').catch(() => undefined);
    assert.deepEqual(rows, [{ one: 1 }]);
  });
});
