/**
 * @module test/gatehouse/bookings-open
 * When a Gatehouse opens its bookings database: not while it is built, but
 * once it listens, or at the first demand of an app that embeds it without
 * starting it (a booking request, readiness, openBookings()), and a
 * Gatehouse stopped before either leaves the database as it was; except on
 * a first start, which begins putting the ready-made database in its
 * empty folder at once.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import request from 'supertest';
import { createGatehouse, type Gatehouse, type GatehouseOptions } from '../../src/gatehouse';
import { createLogger } from '../../src/telemetry';
import { DEMO_CONFIG } from '../support/config-folder';
import { ALICE } from '../support/credentials';
import { freshDataDir } from '../support/pglite';

const OPTIONS: GatehouseOptions = {
  configDir: DEMO_CONFIG,
  host: '127.0.0.1',
  port: 0,
  grpcPort: false,
  watch: false,
  drainDelayMs: 0,
  logger: createLogger({ level: 'silent' }),
};

/** Resolves once `gatehouse`'s bookings database has opened (or failed to), looking again at every turn of the timers. */
async function untilOpened(gatehouse: Gatehouse): Promise<void> {
  while (gatehouse.bookingsState === 'opening') await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('gatehouse: when the bookings database opens', function () {
  const made: Gatehouse[] = [];
  const build = async (options: GatehouseOptions) => {
    const gatehouse = await createGatehouse({ ...OPTIONS, ...options });
    made.push(gatehouse);
    return gatehouse;
  };
  afterEach(async () => {
    await Promise.all(made.splice(0).map((g) => g.stop()));
  });

  it('leaves a database it has not opened as it was when stopped before it starts: no migration ran, and another Gatehouse takes the folder', async () => {
    const data = await freshDataDir();
    const first = await build({ dataDir: data });
    assert.equal(first.bookingsState, 'opening');
    await first.stop();
    const db = await PGlite.create(join(data, 'pglite'));
    try {
      const tables = await db.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'gatehouse'",
      );
      assert.deepEqual(tables.rows, [], 'its migrations ran');
    } finally {
      await db.close();
    }
    // The folder is unlocked: another Gatehouse takes it, and opens its database once asked.
    const second = await build({ dataDir: data });
    assert.equal((await second.openBookings())?.engine, 'PGlite');
  });

  it('begins putting a database in an empty data folder at once, never started: that waits on the disk more than on the CPU', async () => {
    const data = mkdtempSync(join(tmpdir(), 'gatehouse-bookings-open-'));
    try {
      const gatehouse = await build({ dataDir: data });
      await untilOpened(gatehouse);
      assert.equal(gatehouse.bookingsState, 'open');
      assert.equal(existsSync(join(data, 'pglite', 'PG_VERSION')), true);
    } finally {
      await Promise.all(made.splice(0).map((g) => g.stop()));
      rmSync(data, { recursive: true, force: true });
    }
  });

  it('begins to open it once start() listens', async () => {
    const gatehouse = await build({ dataDir: await freshDataDir() });
    await gatehouse.start();
    await untilOpened(gatehouse);
    assert.equal(gatehouse.bookingsState, 'open');
    await request(gatehouse.app.callback()).get('/v1/hotels/bookings/').set('Authorization', ALICE).expect(200);
  });

  it('opens it, never started, at the first booking request, which is answered 503 until it is open', async () => {
    const gatehouse = await build({ dataDir: await freshDataDir() });
    const first = await request(gatehouse.app.callback())
      .get('/v1/hotels/bookings/')
      .set('Authorization', ALICE)
      .expect(503);
    assert.equal(first.headers['retry-after'], '1');
    assert.equal(first.body.detail, 'the booking database is opening: try again');
    await untilOpened(gatehouse);
    assert.equal(gatehouse.bookingsState, 'open');
    await request(gatehouse.app.callback()).get('/v1/hotels/bookings/').set('Authorization', ALICE).expect(200);
  });

  it('opens it, never started, when readiness is asked, which says it is opening until it is open', async () => {
    const gatehouse = await build({ dataDir: await freshDataDir() });
    const first = await request(gatehouse.app.callback()).get('/gateway/v0/check_ready').expect(503);
    assert.match(first.body.detail, /the bookings database is opening/);
    await untilOpened(gatehouse);
    await request(gatehouse.app.callback()).get('/gateway/v0/check_ready').expect(200);
  });
});
