/**
 * @module test/platform/pglite
 * What src/platform/pglite relies on in PGlite, checked against the PGlite
 * installed: fsync is off by its default start parameters, and its Node
 * filesystem's fsync is where a commit's files can be synced.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';
import { hookFsync, PGLITE_VERSION, startParamsWithFsync } from '../../src/platform';
import { pgliteTemplate } from '../support/pglite';
import { pinnedAt, relies } from '../support/reliance';

const rely = (what: string, holds: boolean, detail?: string) =>
  relies('@electric-sql/pglite', PGLITE_VERSION, what, holds, detail);

/** PGlite's Node filesystem, telling of each fsync. */
class WatchedNodeFS extends NodeFS {
  readonly synced: string[] = [];
  override async init(...args: Parameters<NodeFS['init']>): ReturnType<NodeFS['init']> {
    const { emscriptenOpts } = await super.init(...args);
    const hooked = hookFsync(emscriptenOpts as Parameters<typeof hookFsync>[0], (path) => void this.synced.push(path));
    return { emscriptenOpts: hooked as typeof emscriptenOpts };
  }
}

describe('platform/pglite: what Gatehouse relies on in PGlite', function () {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gatehouse-platform-pglite-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is the PGlite it was written against', () => pinnedAt('@electric-sql/pglite', PGLITE_VERSION));

  it('starts Postgres with fsync off by default, which the start parameters given turn on', () => {
    rely(
      'starts with -F (fsync off) by default',
      PGlite.defaultStartParams.includes('-F'),
      PGlite.defaultStartParams.join(' '),
    );
    const params = startParamsWithFsync(PGlite.defaultStartParams);
    rely('takes fsync back on without -F', !params.includes('-F') && params.includes('wal_sync_method=fsync'));
  });

  it("syncs a commit's WAL through its Node filesystem's fsync", async () => {
    // A database made once for the tests: initdb takes seconds.
    await cp(await pgliteTemplate(), dir, { recursive: true });
    const fs = new WatchedNodeFS(join(dir, 'pglite'));
    const db = await PGlite.create({ fs, startParams: startParamsWithFsync(PGlite.defaultStartParams) });
    try {
      fs.synced.length = 0;
      await db.query('create table t (n int)');
      await db.query('insert into t values (1)');
      rely(
        "calls its Node filesystem's stream_ops.fsync for the WAL a commit wrote",
        fs.synced.some((path) => /[\\/]pg_wal[\\/][0-9A-F]{24}$/.test(path)),
        fs.synced.join(', ') || 'no fsync at all',
      );
    } finally {
      await db.close();
    }
  });
});
