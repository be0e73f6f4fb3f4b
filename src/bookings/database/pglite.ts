/**
 * @module bookings/database/pglite
 * PGlite: Postgres compiled to WebAssembly, in this process on a thread of
 * its own (./pglite-thread), its data in a folder made and locked for this
 * process (./pglite-folder), its memory sized by ./pglite-settings. It is
 * one connection: a session holds it, and the others take turns; one whose
 * deadline passes while it waits is dropped before it begins. A commit is
 * answered once its WAL is synced (./durable-fs). A thread that stops (a
 * WebAssembly fault) fails what it was running as an outage, and the next
 * call starts another. Another thread can share the database through a
 * MessagePort ({@link PgliteEngine.connectPort}, {@link pgliteEngineOverPort}).
 */
import { extname, join } from 'node:path';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { Logger } from '../../telemetry';
import { connectionSql, withDeadline, type Engine, type Row } from './engine';
import { asUnavailable, DatabaseUnavailableError, errorText } from './errors';
import { threadClient, threadEnd, type ThreadClient } from './pglite-client';
import { reservePgliteFolder, type ReservedFolder } from './pglite-folder';
import { wasmFlagsGiven } from '../../platform';
import { DEFAULT_PGLITE_COMPILER, pgliteStartParams, type PgliteSettings } from './pglite-settings';
import type { ThreadData } from './pglite-thread';

export { makeDataFolder, PGLITE_FOLDER } from './pglite-folder';

/**
 * The thread's young generation, in MB: PGlite's JavaScript makes little
 * that lives, and V8's default lets the nursery grow to tens of MB of
 * resident memory for it.
 */
const THREAD_YOUNG_GENERATION_MB = 4;

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
  readonly client: ThreadClient;
  /** Closes the database (a checkpoint, its WAL synced) and ends the thread. */
  close(): Promise<void>;
}

/**
 * Starts a thread and opens the database in `dbFolder` on it (putting the
 * ready-made one there first when there is none); rejects with the reason it
 * could not. `onExit` is called when the thread ends.
 */
function startThread(dbFolder: string, settings: PgliteSettings, onExit: () => void): Promise<PgliteThread> {
  const { file, execArgv } = threadModule();
  const workerData: ThreadData = {
    pgliteFolder: dbFolder,
    startParams: pgliteStartParams(settings),
    // A compiler chosen on node's command line is left as chosen.
    baselineWasm: (settings.compiler ?? DEFAULT_PGLITE_COMPILER) === 'baseline' && !wasmFlagsGiven(),
  };
  const worker = new Worker(file, {
    workerData,
    execArgv,
    resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
  });
  let failure: Error | undefined;
  // After a PANIC (a WAL segment that could not be written: a full disk)
  // Postgres would restart; this instance answers nothing more. The thread
  // ends, and the next call starts another, which recovers from the WAL once it can.
  const client = threadClient(worker, () => void worker.terminate());
  worker.on('error', (err) => {
    failure = err;
  });
  worker.on('exit', (code) => {
    client.stopped(threadEnd(code, failure), failure);
    onExit();
  });
  return client.started.then(() => ({
    client,
    async close() {
      await client.call({ op: 'close' }).catch(() => undefined);
      await worker.terminate();
    },
  }));
}

/** The PGlite engine: an {@link Engine} whose database another thread can share. */
export interface PgliteEngine extends Engine {
  /**
   * A port to this database for another thread: {@link pgliteEngineOverPort}
   * there makes an engine whose sessions take turns with this one's.
   */
  connectPort(): Promise<MessagePort>;
}

/** An engine over `client()`: sessions, deadlines and syncs, whichever thread it runs on. */
function engineOver(
  location: string,
  client: () => Promise<ThreadClient>,
  close: () => Promise<void>,
): Omit<PgliteEngine, 'connectPort'> {
  let lastSession = 0;
  let tail: Promise<unknown> = Promise.resolve();
  let closing: Promise<void> | undefined;
  const timedOut = (ms: number) =>
    new DatabaseUnavailableError('timeout', `PGlite in ${location} did not answer within ${ms} ms`);
  // A full or failing disk under the database is an outage, not a fault of the query.
  const outage = (err: unknown): never => {
    throw asUnavailable(err);
  };
  return {
    name: 'PGlite',
    location,
    session(work, timeoutMs) {
      let expired = false;
      const until = Date.now() + timeoutMs;
      // This engine's sessions queue here, so that one dropped at its deadline never asks the thread at all;
      // the thread orders them with other threads' (./pglite-thread).
      const turn = tail.then(async () => {
        if (expired) throw timedOut(timeoutMs);
        if (closing) throw new DatabaseUnavailableError('unavailable', 'the bookings database is closed');
        const thread = await client();
        const session = ++lastSession;
        let begun = false;
        const query = async (text: string, params?: readonly unknown[]) => {
          // The first statement takes the session's turn in the thread: one message, not two.
          const begin = begun ? {} : { begin: { until } };
          begun = true;
          return (await thread.call({ op: 'query', session, ...begin, text, params })) as Row[];
        };
        try {
          return await work(connectionSql(query)).catch(outage);
        } finally {
          if (begun) void thread.call({ op: 'end', session }).catch(() => undefined);
        }
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
      const flushed = client().then((thread) => thread.call({ op: 'flush' }).then(() => undefined));
      // What is late is the disk: say so, rather than that the database did not answer.
      return withDeadline(
        flushed.catch(outage),
        timeoutMs,
        () =>
          new DatabaseUnavailableError(
            'timeout',
            `PGlite in ${location} did not sync its write-ahead log to disk within ${timeoutMs} ms`,
          ),
      );
    },
    close() {
      // The sessions queued before it finish first.
      closing ??= tail.then(close);
      return closing;
    },
  };
}

export interface PgliteEngineOptions {
  /** The data folder, or one reserved already (made and locked: ./pglite-folder). */
  folder: string | ReservedFolder;
  /** The database's memory settings, and how its WebAssembly is compiled. */
  settings?: PgliteSettings;
  /** Says when a first start puts a new database in the folder. */
  logger?: Pick<Logger, 'info'>;
}

/**
 * Opens the database in the data folder (made and locked here unless it is
 * reserved already); on the first start, the ready-made database is put
 * there first. The folder is unlocked again when this rejects.
 * @throws when the folder cannot be made, is locked by another process, or holds a database PGlite cannot open.
 */
export async function openPgliteEngine(options: PgliteEngineOptions): Promise<PgliteEngine> {
  const settings = options.settings ?? {};
  // Checked now: a setting out of bounds is the caller's mistake, not the thread's.
  pgliteStartParams(settings);
  const reserved = typeof options.folder === 'string' ? await reservePgliteFolder(options.folder) : options.folder;
  const { folder, dbFolder } = reserved;
  let current: Promise<PgliteThread> | undefined;
  const open = (): Promise<PgliteThread> => {
    if (current) return current;
    const started: Promise<PgliteThread> = startThread(dbFolder, settings, () => {
      if (current === started) current = undefined;
    });
    current = started;
    started.catch(() => {
      if (current === started) current = undefined;
    });
    return started;
  };
  try {
    if (!reserved.holdsDatabase)
      options.logger?.info({ dataDir: folder }, 'putting a new bookings database in the data folder (first start)');
    await open();
  } catch (err) {
    await reserved.release();
    throw new Error(`cannot open the bookings database in ${dbFolder}: ${errorText(err)}`, { cause: err });
  }
  // A thread that stopped is started again; a database that no longer opens is an outage.
  const reopened = () =>
    open().then(
      (thread) => thread.client,
      (err: unknown) => {
        throw new DatabaseUnavailableError('unavailable', `PGlite in ${folder} did not open again: ${errorText(err)}`, {
          cause: err,
        });
      },
    );
  const engine = engineOver(folder, reopened, async () => {
    const thread = await current?.catch(() => undefined);
    await thread?.close();
    await reserved.release();
  });
  return {
    ...engine,
    async connectPort() {
      const { port1, port2 } = new MessageChannel();
      await (await reopened()).call({ op: 'connect', port: port2 });
      return port1;
    },
  };
}

/**
 * An engine on another thread over `port` (from {@link PgliteEngine.connectPort}):
 * its sessions take turns with every other caller's. Closing it closes the
 * port; the database stays open for the others.
 */
export function pgliteEngineOverPort(port: MessagePort, location: string): Engine {
  const client = threadClient(port, () => undefined, false);
  port.on('close', () => client.stopped('its port closed'));
  const ready = Promise.resolve(client);
  return engineOver(
    location,
    () => ready,
    async () => port.close(),
  );
}
