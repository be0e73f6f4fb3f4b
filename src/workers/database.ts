/**
 * @module workers/database
 * The one PGlite of a gateway's workers, held by the main thread: its data
 * folder reserved (locked, as one process locks it) when a worker first
 * wants the bookings, opened when one first calls it, and reached by each
 * worker through a port of its own, so that a call goes from the worker to
 * PGlite's thread without passing here.
 */
import type { MessagePort } from 'node:worker_threads';
// Not the bookings index: the main thread of workers holds the database, and loads none of the rest.
import { openPgliteEngine, type PgliteEngine } from '../bookings/database/pglite';
import { reservePgliteFolder, type ReservedFolder } from '../bookings/database/pglite-folder';
import type { Logger } from '../telemetry';
import type { WorkerOptions } from './messages';

export interface SharedDatabase {
  /** Reserves the data folder; rejects as one process does when another holds it. */
  reserve(): Promise<void>;
  /** A port to the database for one worker; opens it first if need be. Rejects saying why it cannot be opened. */
  connect(): Promise<MessagePort>;
  /** Closes it once the workers are stopped: the folder is unlocked. */
  close(): Promise<void>;
  /** Whether it is open: a worker that starts now finds it so. */
  readonly open: boolean;
}

export function sharedDatabase(options: WorkerOptions, logger: Logger): SharedDatabase {
  let reserved: Promise<ReservedFolder> | undefined;
  let opening: Promise<PgliteEngine> | undefined;
  let isOpen = false;
  // Kept until it fails: then the next worker to ask (a reload that adds a booking Mapping) tries again.
  const reserve = () => {
    const made = (reserved ??= reservePgliteFolder(options.dataDir));
    made.catch(() => {
      if (reserved === made) reserved = undefined;
    });
    return made;
  };
  const open = () => {
    const made = (opening ??= reserve().then((folder) =>
      openPgliteEngine({
        folder,
        settings: { sharedBuffers: options.pgliteSharedBuffers, compiler: options.pgliteCompiler },
        logger: logger.child({ module: 'bookings' }),
      }),
    ));
    made.then(
      () => (isOpen = opening === made),
      () => {
        // A database that does not open unlocks its folder: it is reserved again next time.
        if (opening === made) opening = reserved = undefined;
      },
    );
    return made;
  };
  return {
    async reserve() {
      const folder = await reserve();
      // A first start's copy of the ready-made database waits on the disk: it begins at once.
      if (!folder.holdsDatabase) void open().catch(() => undefined);
    },
    connect: async () => (await open()).connectPort(),
    get open() {
      return isOpen;
    },
    async close() {
      isOpen = false;
      const engine = await opening?.catch(() => undefined);
      if (engine) await engine.close();
      else await (await reserved?.catch(() => undefined))?.release();
    },
  };
}
