/**
 * @module bookings/database/durable-fs
 * PGlite's Node filesystem, made durable. PGlite starts Postgres with fsync
 * off (`-F`), and its Node filesystem has no fsync at all (nor fdatasync):
 * a commit reaches the operating system, which keeps it through a killed
 * process but not through a power cut or a kernel crash. (Its
 * `relaxedDurability` option changes nothing here: it only decides whether
 * a query waits for `syncToFs`, which this filesystem does not implement.)
 *
 * Here Postgres runs with fsync on, syncing through `fsync()`, and the
 * filesystem's fsync is real: data files, the control file and folders are
 * synced at once (at checkpoints and when a WAL segment is made: rare), while
 * the WAL segment a commit wrote is only noted, and synced off the event loop
 * by {@link WalSync.flush}, which every write awaits before it answers. One
 * sync covers every commit made before it began: concurrent writes share it
 * (a group commit), and no request waits on the event loop for a disk.
 */
import { promises as fsp, fsyncSync } from 'node:fs';
import { NodeFS } from '@electric-sql/pglite/nodefs';
// Not the index of platform: this runs on the database's thread, which needs nothing else of it.
import { hookFsync, startParamsWithFsync } from '../../platform/pglite';

/** A WAL segment's path: `.../pg_wal/000000010000000000000001`. */
const WAL_SEGMENT = /[\\/]pg_wal[\\/][0-9A-F]{24}$/;

/** PGlite's start parameters with fsync on: see platform/pglite. */
export const durableStartParams = startParamsWithFsync;

/** How a file is synced: its data, through a descriptor of its own (a sync is per file, not per descriptor). */
async function syncFile(path: string): Promise<void> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(path, 'r+');
  } catch (err) {
    // A segment recycled by a checkpoint since: the checkpoint synced what it held.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/** The WAL segments written since their last sync, and the group sync of them. */
export class WalSync {
  private dirty = new Set<string>();
  private flushing: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(private readonly sync: (path: string) => Promise<void> = syncFile) {}

  /** Notes that `path` was written and asked to be synced. */
  mark(path: string): void {
    this.dirty.add(path);
  }

  /** Resolves once every segment noted before the call is on disk. */
  flush(): Promise<void> {
    if (this.flushing === undefined) return this.start();
    // The sync under way may have begun before the caller's write: the next one covers it, and every caller until it begins.
    this.next ??= this.flushing
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.start();
      });
    return this.next;
  }

  private start(): Promise<void> {
    if (this.dirty.size === 0) return Promise.resolve();
    const paths = [...this.dirty];
    this.dirty.clear();
    const run = Promise.all(paths.map((p) => this.sync(p))).then(
      () => undefined,
      (err: unknown) => {
        // Not synced: the next flush tries them again, and this one's callers hear why.
        for (const p of paths) this.dirty.add(p);
        throw err;
      },
    );
    const tracked = run.finally(() => {
      if (this.flushing === tracked) this.flushing = undefined;
    });
    this.flushing = tracked;
    tracked.catch(() => undefined);
    return run;
  }
}

/** PGlite's {@link NodeFS} whose fsync reaches the disk, the WAL's through {@link WalSync}. */
export class DurableNodeFS extends NodeFS {
  readonly wal: WalSync;

  /** @param syncWal how a WAL segment is synced; the default syncs its data to disk. */
  constructor(dataDir: string, syncWal?: (path: string) => Promise<void>) {
    super(dataDir);
    this.wal = new WalSync(syncWal);
  }

  override async init(...args: Parameters<NodeFS['init']>): ReturnType<NodeFS['init']> {
    const { emscriptenOpts } = await super.init(...args);
    const synced = hookFsync(emscriptenOpts as Parameters<typeof hookFsync>[0], (path, fd) => {
      if (WAL_SEGMENT.test(path)) this.wal.mark(path);
      else fsyncSync(fd);
    });
    return { emscriptenOpts: synced as typeof emscriptenOpts };
  }
}
