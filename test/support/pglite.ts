/**
 * @module test/support/pglite
 * Data folders for the tests of the embedded database. PGlite makes a new
 * database with initdb, which takes seconds (ten and more on a loaded
 * machine); so a template is made once, kept in the temporary folder for the
 * runs that follow (one per PGlite version), and every test gets a copy of
 * it: a folder as a first start leaves it, before Gatehouse's migrations.
 * A server a test starts without looking into its bookings gets a folder
 * another such server left (./process): the run copies as many as run at
 * once, not one a start. The root hook (./root-hooks) makes the template
 * before the first test and removes the copies after the last.
 */
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { cp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

/** The sub-folder Gatehouse keeps PGlite's files in (src/bookings/database/pglite). */
const PGLITE_FOLDER = 'pglite';

// Its package.json is not exported: found beside its main file, dist/index.cjs.
const VERSION: string = JSON.parse(
  readFileSync(join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json'), 'utf8'),
).version;
const TEMPLATE = join(tmpdir(), `gatehouse-test-pglite-${VERSION}-${process.getuid?.() ?? 0}`);

const copies = new Set<string>();
/** Folders a server has used and left: free for the next. */
const free: string[] = [];

/** Makes the template unless an earlier run did; renamed into place whole, so a run stopped halfway leaves none. */
export async function pgliteTemplate(): Promise<string> {
  if (existsSync(join(TEMPLATE, PGLITE_FOLDER, 'PG_VERSION'))) return TEMPLATE;
  const making = mkdtempSync(`${TEMPLATE}-making-`);
  try {
    const db = await PGlite.create(join(making, PGLITE_FOLDER));
    await db.close();
    renameSync(making, TEMPLATE);
  } catch (err) {
    rmSync(making, { recursive: true, force: true });
    // Another run made it meanwhile.
    if (!existsSync(join(TEMPLATE, PGLITE_FOLDER, 'PG_VERSION'))) throw err;
  }
  return TEMPLATE;
}

/** A new data folder holding a database no Gatehouse has opened yet. */
export async function freshDataDir(): Promise<string> {
  const from = await pgliteTemplate();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-data-'));
  copies.add(dir);
  // Not cpSync: tens of megabytes copied on the event loop would stall the servers and timers of the tests running beside.
  await cp(join(from, PGLITE_FOLDER), join(dir, PGLITE_FOLDER), { recursive: true });
  return dir;
}

/**
 * A data folder for a server whose bookings the test does not look into:
 * one such a server used and left, migrated and seeded, else a new copy.
 * Hand it back with {@link releaseDataDir} once the server has exited.
 */
export async function reusableDataDir(): Promise<string> {
  return free.pop() ?? (await freshDataDir());
}

/** Gives back a folder of {@link reusableDataDir}: its process has exited, and its lock with it. */
export function releaseDataDir(dir: string): void {
  free.push(dir);
}

/** Removes every copy made here (the template stays for the next run). */
export async function removeDataDirs(): Promise<void> {
  const dirs = [...copies];
  copies.clear();
  free.length = 0;
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
}
