/**
 * @module bookings/database/pglite
 * PGlite: Postgres compiled to WebAssembly, in this process, its data in a
 * folder. It has one connection: calls take turns in a queue, and one whose
 * deadline passes while it waits is dropped before it begins. A commit is
 * answered once its WAL is synced (./durable-fs); the folder is locked
 * against a second process (./folder-lock).
 */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import type { Logger } from '../../telemetry';
import type { DurableNodeFS } from './durable-fs';
import { withDeadline, type Engine, type Sql } from './engine';
import { asUnavailable, DatabaseUnavailableError, errorText } from './errors';
import { lockFolder } from './folder-lock';

/** The sub-folder of the data folder that holds the database's files. */
export const PGLITE_FOLDER = 'pglite';

/** Why a folder could not be made or used, in words. */
function folderProblem(err: unknown): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOTDIR':
    case 'EEXIST':
      return 'it is not a folder';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'ENOENT':
      return 'no folder can be made there';
    default:
      return errorText(err);
  }
}

/**
 * Makes `folder` and the parents it lacks, one at a time: Node's recursive
 * mkdir loops for ever under a file system that refuses new folders with
 * ENOENT (`/proc/x`), holding the event loop.
 */
function makeFolders(folder: string): void {
  const missing: string[] = [];
  for (let at = resolve(folder); ; ) {
    try {
      if (!statSync(at).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
      break;
    } catch (err) {
      const parent = dirname(at);
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || parent === at) throw err;
      missing.push(at);
      at = parent;
    }
  }
  for (let i = missing.length - 1; i >= 0; i--) {
    try {
      mkdirSync(missing[i]);
    } catch (err) {
      // Made meanwhile by another process: as good.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(missing[i]).isDirectory()) throw err;
    }
  }
}

/** Makes the data folder (and its parents) unless it exists, and checks it can be written; throws, naming it, when not. */
export function makeDataFolder(folder: string): void {
  try {
    makeFolders(folder);
  } catch (err) {
    throw new Error(`cannot make the data folder ${folder}: ${folderProblem(err)}; give another (--data, GATEHOUSE_DATA)`);
  }
  try {
    accessSync(folder, constants.W_OK);
  } catch (err) {
    throw new Error(`cannot write in the data folder ${folder}: ${folderProblem(err)}; give another (--data, GATEHOUSE_DATA)`);
  }
}

function sqlOf(db: PGlite | Transaction): Sql {
  return {
    async query(text, params) {
      return (await db.query(text, params as unknown[] | undefined)).rows as never[];
    },
    transaction(work) {
      if (!('transaction' in db)) throw new Error('PGlite has no nested transactions');
      return db.transaction((tx) => work(sqlOf(tx)));
    },
  };
}

/**
 * Opens (and on the first start, makes) the database in `folder`: the first
 * start runs initdb, which takes seconds.
 * @throws when the folder cannot be made, is locked by another process, or holds a database PGlite cannot open.
 */
export async function openPgliteEngine(options: { folder: string; logger?: Pick<Logger, 'info'> }): Promise<Engine> {
  const folder = resolve(options.folder);
  makeDataFolder(folder);
  // Loaded on first use: a process on PostgreSQL, or one running `gatehouse --help`, does not load the WebAssembly build.
  const { PGlite: PGliteClass } = require('@electric-sql/pglite') as typeof import('@electric-sql/pglite');
  const { DurableNodeFS: DurableFS, durableStartParams } = require('./durable-fs') as typeof import('./durable-fs');
  const lock = await lockFolder(folder);
  const dbFolder = join(folder, PGLITE_FOLDER);
  let db: PGlite;
  let fs: DurableNodeFS;
  try {
    const exists = (() => {
      try {
        return statSync(join(dbFolder, 'PG_VERSION')).isFile();
      } catch {
        return false;
      }
    })();
    if (!exists) options.logger?.info({ dataDir: folder }, 'making the bookings database in the data folder (first start: this takes a few seconds)');
    fs = new DurableFS(dbFolder);
    db = await PGliteClass.create({ fs, startParams: durableStartParams(PGliteClass.defaultStartParams) });
  } catch (err) {
    await lock.release();
    throw new Error(`cannot open the bookings database in ${dbFolder}: ${errorText(err)}`, { cause: err });
  }

  let tail: Promise<unknown> = Promise.resolve();
  let closing: Promise<void> | undefined;
  const timedOut = (ms: number) => new DatabaseUnavailableError('timeout', `PGlite in ${folder} did not answer within ${ms} ms`);
  // A full or failing disk under the database is an outage, not a fault of the query.
  const outage = (err: unknown): never => {
    throw asUnavailable(err);
  };

  return {
    name: 'PGlite',
    location: folder,
    session(work, timeoutMs) {
      let expired = false;
      const turn = tail.then(() => {
        if (expired) throw timedOut(timeoutMs);
        if (closing) throw new DatabaseUnavailableError('unavailable', 'the bookings database is closed');
        return work(sqlOf(db)).catch(outage);
      });
      tail = turn.catch(() => undefined);
      return withDeadline(turn, timeoutMs, () => timedOut(timeoutMs), () => {
        expired = true;
      });
    },
    persisted(timeoutMs) {
      // What is late is the disk: say so, rather than that the database did not answer.
      return withDeadline(fs.wal.flush().catch(outage), timeoutMs, () => new DatabaseUnavailableError('timeout', `PGlite in ${folder} did not sync its write-ahead log to disk within ${timeoutMs} ms`));
    },
    close() {
      closing ??= (async () => {
        await tail;
        // Closing checkpoints: the files are whole, and the WAL need not be replayed at the next start.
        await db.close().catch(() => undefined);
        await fs.wal.flush().catch(() => undefined);
        await lock.release();
      })();
      return closing;
    },
  };
}
