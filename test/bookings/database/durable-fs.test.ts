/**
 * @module test/bookings/database/durable-fs
 * PGlite made durable: Postgres runs with fsync on, a commit notes the WAL
 * segment it wrote, and a flush resolves only once a sync that began after
 * the commit is done. Concurrent flushes share syncs (a group commit), and a
 * failed sync is told to its callers and tried again.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { durableStartParams, DurableNodeFS, WalSync } from '../../../src/bookings/database/durable-fs';
import { freshDataDir } from '../../support/pglite';

/** A sync the test finishes by hand, recording what it was asked. */
function heldSync() {
  const calls: { path: string; done: (err?: Error) => void }[] = [];
  return {
    calls,
    sync: (path: string) =>
      new Promise<void>((resolve, reject) => calls.push({ path, done: (err) => (err ? reject(err) : resolve()) })),
  };
}

const settled = async (p: Promise<unknown>) => {
  let state = 'pending';
  p.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return state;
};

describe('bookings/database/durable-fs: the WAL sync', () => {
  it('resolves at once with nothing written, and after the sync of what was', async () => {
    const held = heldSync();
    const wal = new WalSync(held.sync);
    await wal.flush();
    assert.equal(held.calls.length, 0);
    wal.mark('/d/pg_wal/000000010000000000000001');
    const flushed = wal.flush();
    assert.equal(await settled(flushed), 'pending');
    assert.deepEqual(
      held.calls.map((c) => c.path),
      ['/d/pg_wal/000000010000000000000001'],
    );
    held.calls[0].done();
    assert.equal(await settled(flushed), 'resolved');
  });

  it('does not answer a write made during a sync with that sync, but with the next, which every such write shares', async () => {
    const held = heldSync();
    const wal = new WalSync(held.sync);
    wal.mark('/d/pg_wal/A');
    const first = wal.flush();
    wal.mark('/d/pg_wal/A');
    const second = wal.flush();
    const third = wal.flush();
    held.calls[0].done();
    assert.equal(await settled(first), 'resolved');
    assert.equal(await settled(second), 'pending', 'its write came after the first sync began');
    assert.equal(held.calls.length, 2, 'one more sync for both callers that came during the first');
    held.calls[1].done();
    assert.equal(await settled(second), 'resolved');
    assert.equal(await settled(third), 'resolved');
  });

  it('tells a failed sync to its callers, and syncs the segment again at the next flush', async () => {
    const held = heldSync();
    const wal = new WalSync(held.sync);
    wal.mark('/d/pg_wal/A');
    const failing = wal.flush();
    held.calls[0].done(new Error('EIO'));
    await assert.rejects(failing, /EIO/);
    const retried = wal.flush();
    assert.deepEqual(
      held.calls.map((c) => c.path),
      ['/d/pg_wal/A', '/d/pg_wal/A'],
    );
    held.calls[1].done();
    await retried;
  });

  it('runs PGlite with fsync on, and notes the WAL segment a commit wrote', async function () {
    const synced: string[] = [];
    const fs = new DurableNodeFS(join(await freshDataDir(), 'pglite'), async (path) => {
      synced.push(path);
    });
    const db = await PGlite.create({ fs, startParams: durableStartParams(PGlite.defaultStartParams) });
    try {
      assert.deepEqual(
        (await db.query("SELECT current_setting('fsync') AS fsync, current_setting('wal_sync_method') AS method")).rows,
        [{ fsync: 'on', method: 'fsync' }],
      );
      await fs.wal.flush();
      synced.length = 0;
      await db.query('CREATE TABLE t (n int)');
      await db.query('INSERT INTO t VALUES (1)');
      await fs.wal.flush();
      assert.equal(synced.length, 1);
      assert.match(synced[0], /[\\/]pg_wal[\\/][0-9A-F]{24}$/);
    } finally {
      await db.close();
    }
  });
});
