/**
 * @module platform/pglite
 * What Gatehouse changes of PGlite beyond its documented options, to make
 * its commits durable: the start parameter that turns fsync off, and the
 * fsync of the Emscripten Node filesystem under it, which does nothing.
 * Written against @electric-sql/pglite 0.5.16 (pinned in package.json);
 * test/platform/pglite.test.ts fails, naming the version, when a release
 * changes any of it, and {@link hookFsync} refuses to run on a filesystem
 * of another shape rather than run without syncing.
 */

/** The PGlite release these functions were written against. */
export const PGLITE_VERSION = '0.5.16';

/** PGlite's start parameters with fsync on (its defaults hold `-F`), Postgres syncing its WAL with fsync(): fdatasync() does nothing under Emscripten. */
export function startParamsWithFsync(defaults: readonly string[]): string[] {
  return [...defaults.filter((p) => p !== '-F'), '-c', 'wal_sync_method=fsync'];
}

/** What of Emscripten's module the hook needs: its Node filesystem. */
interface EmscriptenNodeFs {
  stream_ops: { fsync?: (stream: { nfd: number; node: unknown }) => number };
  realPath(node: unknown): string;
  tryFSOperation<T>(operation: () => T): T;
}

/** The Emscripten options a PGlite filesystem's `init` hands back. */
export interface EmscriptenOptions {
  preRun?: ((mod: never) => void)[];
  [option: string]: unknown;
}

/**
 * `emscriptenOpts` with a step that makes the Node filesystem's fsync call
 * `fsync(path, fd)` (the file's real path and its host descriptor) where
 * Emscripten's does nothing. The step throws, when PGlite starts, on a
 * filesystem of another shape.
 */
export function hookFsync<T extends EmscriptenOptions>(
  emscriptenOpts: T,
  fsync: (path: string, fd: number) => void,
): T {
  const hook = (mod: { NODEFS?: Partial<EmscriptenNodeFs> }) => {
    const nodefs = mod.NODEFS;
    // Checked, not assumed: a PGlite whose filesystem changed shape must not run without syncing.
    if (!nodefs?.stream_ops || typeof nodefs.realPath !== 'function' || typeof nodefs.tryFSOperation !== 'function') {
      throw new Error(
        `this version of PGlite has no Node filesystem that can be synced (written for ${PGLITE_VERSION}): install the version package.json names`,
      );
    }
    const fs = nodefs as EmscriptenNodeFs;
    fs.stream_ops.fsync = (stream) => {
      const path = fs.realPath(stream.node);
      fs.tryFSOperation(() => fsync(path, stream.nfd));
      return 0;
    };
  };
  return { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun ?? []), hook] };
}
