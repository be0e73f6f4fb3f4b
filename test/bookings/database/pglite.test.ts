/**
 * @module test/bookings/database/pglite
 * The embedded database: its folder made on first use, a folder it cannot
 * make or a database it cannot open refused with the reason (and the folder
 * left free for the next try), and a call whose deadline passes while it
 * waits for the one connection answered then, and never run; a first start
 * seeds within the start's budget, not a request's deadline.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseUnavailableError, openBookingDatabase, type Booking } from '../../../src/bookings';
import { makeDataFolder, openPgliteEngine } from '../../../src/bookings/database/pglite';
import { freshDataDir } from '../../support/pglite';

const seeded: Booking = {
  id: 'dcc2eae2-d010-4a80-996b-4ef47cbea644',
  itemId: 'af14ed08-a000-4064-b436-ebb6b009dbc7',
  user: 'bob',
  status: 'confirmed',
  start: '2026-07-04',
  length: 5,
  createdAt: '2026-02-01T12:00:00.000Z',
};

describe('bookings/database/pglite', function () {
  let scratch: string;
  before(() => {
    scratch = mkdtempSync(join(tmpdir(), 'gatehouse-pglite-test-'));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('refuses a data folder that is a file, saying how to give another', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, 'not a folder');
    await assert.rejects(openBookingDatabase({ dataDir: file }), {
      message: `cannot make the data folder ${file}: it is not a folder; give another (--data, GATEHOUSE_DATA)`,
    });
  });

  it('refuses at once a data folder where no folder can be made (under /proc), where a recursive mkdir looped for ever', async function () {
    if (!existsSync('/proc/self')) this.skip();
    await assert.rejects(openBookingDatabase({ dataDir: '/proc/gatehouse-data/db' }), {
      message:
        'cannot make the data folder /proc/gatehouse-data/db: no folder can be made there; give another (--data, GATEHOUSE_DATA)',
    });
  });

  it('makes the parents a data folder lacks, and refuses one under a file', async () => {
    const nested = join(scratch, 'one', 'two', 'data');
    makeDataFolder(nested);
    assert.ok(statSync(nested).isDirectory());
    makeDataFolder(nested);
    const file = join(scratch, 'plain-file');
    writeFileSync(file, 'x');
    await assert.rejects(openBookingDatabase({ dataDir: join(file, 'data') }), {
      message: `cannot make the data folder ${join(file, 'data')}: it is not a folder; give another (--data, GATEHOUSE_DATA)`,
    });
  });

  it('refuses a folder holding a database it cannot open, and leaves the folder free for the next try', async () => {
    const dir = await freshDataDir();
    writeFileSync(join(dir, 'pglite', 'PG_VERSION'), '9\n');
    await assert.rejects(openBookingDatabase({ dataDir: dir }), (err: Error) =>
      err.message.startsWith(`cannot open the bookings database in ${join(dir, 'pglite')}: `),
    );
    writeFileSync(join(dir, 'pglite', 'PG_VERSION'), '18\n');
    const db = await openBookingDatabase({ dataDir: dir });
    await db.close();
  });

  it('answers a call whose deadline passes while it waits for the connection, and never runs it', async () => {
    const engine = await openPgliteEngine({ folder: await freshDataDir() });
    try {
      let release!: () => void;
      // Deadlines past the test's own timeout for the calls whose time is not the subject: a loaded machine slows them.
      const busy = engine.session(() => new Promise<void>((resolve) => (release = resolve)), 600_000);
      let ran = false;
      const waiting = engine.session(async (sql) => {
        ran = true;
        return sql.query('SELECT 1');
      }, 50);
      await assert.rejects(
        waiting,
        (err: unknown) => err instanceof DatabaseUnavailableError && err.kind === 'timeout',
      );
      release();
      await busy;
      assert.deepEqual(await engine.session((sql) => sql.query('SELECT 1 AS one'), 600_000), [{ one: 1 }]);
      assert.equal(ran, false);
    } finally {
      await engine.close();
    }
  });

  it('seeds a first start within the start’s budget, not within a request’s deadline shorter than a sync of the disk', async () => {
    const dir = await freshDataDir();
    // 1 ms: shorter than a disk takes to sync the write-ahead log, which a seeding waits for.
    const db = await openBookingDatabase({ dataDir: dir, timeoutMs: 1, seed: { hotel: [seeded] } });
    await db.ready();
    await db.close();
    const reopened = await openBookingDatabase({
      dataDir: dir,
      seed: { hotel: [{ ...seeded, id: '00000000-0000-4000-8000-000000000001' }] },
    });
    try {
      assert.deepEqual(await reopened.store('hotel').list('bob'), [seeded]);
    } finally {
      await reopened.close();
    }
  });
});
