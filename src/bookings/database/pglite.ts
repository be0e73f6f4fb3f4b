/**
 * @module bookings/database/pglite
 * PGlite: Postgres compiled to WebAssembly, in this process on a thread of
 * its own (./pglite-thread), its data in a folder. It has one connection:
 * calls take turns in a queue, and one whose deadline passes while it waits
 * is dropped before it begins. A commit is answered once its WAL is synced
 * (./durable-fs); the folder is locked against a second process
 * (./folder-lock). A thread that stops (a WebAssembly fault) fails what it
 * was running as an outage, and the next call starts another.
 */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../telemetry';
import { connectionSql, withDeadline, type Engine, type Row } from './engine';
import { asUnavailable, DatabaseUnavailableError, errorText } from './errors';
import { lockFolder } from './folder-lock';
import { rebuildError, type ThreadCall, type ThreadReply, type ThreadWork } from './pglite-thread';

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
  for (let at = resolve(folder); ;) {
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
    throw new Error(
      `cannot make the data folder ${folder}: ${folderProblem(err)}; give another (--data, GATEHOUSE_DATA)`,
    );
  }
  try {
    accessSync(folder, constants.W_OK);
  } catch (err) {
    throw new Error(
      `cannot write in the data folder ${folder}: ${folderProblem(err)}; give another (--data, GATEHOUSE_DATA)`,
    );
  }
}

/** The thread's module, beside this one; from the TypeScript sources (npm run dev, the tests) compiled through tsx, as this one is. */
function threadModule(): { file: string; execArgv: string[] } {
  const extension = extname(__filename);
  return {
    file: join(__dirname, `pglite-thread${extension}`),
    execArgv: extension === '.ts' ? ['--require', 'tsx/cjs'] : [],
  };
}

/** A PGlite thread with its database open. */
interface PgliteThread {
  /** Posts `call` and resolves its rows (a query) or nothing; rejects with the thread's error, or an outage when the thread stops. */
  call(work: ThreadWork): Promise<unknown[] | undefined>;
  /** Closes the database (a checkpoint, its WAL synced) and ends the thread. */
  close(): Promise<void>;
}

/** The severities after which Postgres stops the server (or the session, which is the whole of PGlite). */
const ENDS_THE_DATABASE = new Set(['PANIC', 'FATAL']);

interface Waiter {
  resolve(rows: unknown[] | undefined): void;
  reject(err: Error): void;
}

/**
 * Starts a thread and opens the database in `dbFolder` on it; rejects with
 * the reason it could not. `onExit` is called when the thread ends. The
 * thread keeps the process alive only while a call is under way.
 */
function startThread(dbFolder: string, onExit: () => void): Promise<PgliteThread> {
  const { file, execArgv } = threadModule();
  const worker = new Worker(file, { workerData: { pgliteFolder: dbFolder }, execArgv });
  const waiting = new Map<number, Waiter>();
  let lastId = 0;
  let stopped: Error | undefined;
  let failure: Error | undefined;
  const thread: PgliteThread = {
    call(work) {
      if (stopped) return Promise.reject(stopped);
      const id = ++lastId;
      if (waiting.size === 0) worker.ref();
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.postMessage({ ...work, id } satisfies ThreadCall);
      });
    },
    async close() {
      await thread.call({ op: 'close' }).catch(() => undefined);
      await worker.terminate();
    },
  };
  return new Promise((resolveStart, rejectStart) => {
    waiting.set(0, { resolve: () => resolveStart(thread), reject: rejectStart });
    worker.on('message', (reply: ThreadReply) => {
      const waiter = waiting.get(reply.id);
      if (waiter === undefined) return;
      waiting.delete(reply.id);
      if (waiting.size === 0) worker.unref();
      if (reply.error !== undefined) waiter.reject(rebuildError(reply.error));
      else waiter.resolve(reply.rows);
      // After a PANIC (a WAL segment that could not be written: a full disk)
      // Postgres would restart; this instance answers nothing more. The
      // thread ends, and the next call starts another, which recovers from
      // the WAL once it can.
      if (reply.error !== undefined && ENDS_THE_DATABASE.has(String(reply.error.fields.severity))) {
        void worker.terminate();
      }
    });
    worker.on('error', (err) => {
      failure = err;
    });
    worker.on('exit', (code) => {
      stopped = new DatabaseUnavailableError(
        'unavailable',
        `the PGlite thread stopped: ${failure ? errorText(failure) : `exit code ${code}`}`,
        {
          cause: failure,
        },
      );
      for (const waiter of waiting.values()) waiter.reject(stopped);
      waiting.clear();
      onExit();
    });
  });
}

/**
 * Opens (and on the first start, makes) the database in `folder`: the first
 * start runs initdb, which takes seconds.
 * @throws when the folder cannot be made, is locked by another process, or holds a database PGlite cannot open.
 */
export async function openPgliteEngine(options: { folder: string; logger?: Pick<Logger, 'info'> }): Promise<Engine> {
  const folder = resolve(options.folder);
  makeDataFolder(folder);
  const lock = await lockFolder(folder);
  const dbFolder = join(folder, PGLITE_FOLDER);
  let current: Promise<PgliteThread> | undefined;
  const open = (): Promise<PgliteThread> => {
    if (current) return current;
    const started: Promise<PgliteThread> = startThread(dbFolder, () => {
      if (current === started) current = undefined;
    });
    current = started;
    started.catch(() => {
      if (current === started) current = undefined;
    });
    return started;
  };
  try {
    const exists = (() => {
      try {
        return statSync(join(dbFolder, 'PG_VERSION')).isFile();
      } catch {
        return false;
      }
    })();
    if (!exists)
      options.logger?.info(
        { dataDir: folder },
        'making the bookings database in the data folder (first start: this takes a few seconds)',
      );
    await open();
  } catch (err) {
    await lock.release();
    throw new Error(`cannot open the bookings database in ${dbFolder}: ${errorText(err)}`, { cause: err });
  }

  let tail: Promise<unknown> = Promise.resolve();
  let closing: Promise<void> | undefined;
  const timedOut = (ms: number) =>
    new DatabaseUnavailableError('timeout', `PGlite in ${folder} did not answer within ${ms} ms`);
  // A full or failing disk under the database is an outage, not a fault of the query.
  const outage = (err: unknown): never => {
    throw asUnavailable(err);
  };
  // A thread that stopped is started again; a database that no longer opens is an outage.
  const reopened = () =>
    open().catch((err: unknown) => {
      throw new DatabaseUnavailableError('unavailable', `PGlite in ${folder} did not open again: ${errorText(err)}`, {
        cause: err,
      });
    });

  return {
    name: 'PGlite',
    location: folder,
    session(work, timeoutMs) {
      let expired = false;
      const turn = tail.then(async () => {
        if (expired) throw timedOut(timeoutMs);
        if (closing) throw new DatabaseUnavailableError('unavailable', 'the bookings database is closed');
        const thread = await reopened();
        return work(
          connectionSql(async (text, params) => (await thread.call({ op: 'query', text, params })) as Row[]),
        ).catch(outage);
      });
      tail = turn.catch(() => undefined);
      return withDeadline(
        turn,
        timeoutMs,
        () => timedOut(timeoutMs),
        () => {
          expired = true;
        },
      );
    },
    persisted(timeoutMs) {
      const flushed = reopened().then((thread) => thread.call({ op: 'flush' }).then(() => undefined));
      // What is late is the disk: say so, rather than that the database did not answer.
      return withDeadline(
        flushed.catch(outage),
        timeoutMs,
        () =>
          new DatabaseUnavailableError(
            'timeout',
            `PGlite in ${folder} did not sync its write-ahead log to disk within ${timeoutMs} ms`,
          ),
      );
    },
    close() {
      closing ??= (async () => {
        await tail;
        const thread = await current?.catch(() => undefined);
        await thread?.close();
        await lock.release();
      })();
      return closing;
    },
  };
}
