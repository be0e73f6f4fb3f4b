/**
 * @module bookings/database/pglite-settings
 * How much memory the embedded database takes. Postgres's defaults are a
 * server's: shared_buffers of 128 MB, all of it written at start, so all
 * of it resident. The bookings are small rows read by key, and the
 * operating system caches the files under the database as well: a few
 * hundred 8 kB pages of shared buffers hold what one request touches. The
 * rest is sized for the one connection PGlite has.
 */

/** The default size of Postgres's shared buffers in PGlite: 1 MiB, 128 pages. */
export const DEFAULT_PGLITE_SHARED_BUFFERS = 1024 * 1024;

/** The smallest shared_buffers Postgres starts with: 16 pages. */
export const MIN_PGLITE_SHARED_BUFFERS = 128 * 1024;

/**
 * How V8 compiles PGlite's WebAssembly: `baseline`, every function at
 * once with V8's baseline compiler (Liftoff) and never again; or
 * `optimizing`, V8's default, which compiles the hot functions again with
 * TurboFan, keeping tens of MB more resident for the life of the process
 * (see platform/v8-wasm).
 */
export type PgliteCompiler = 'baseline' | 'optimizing';

/** The default compiler of PGlite's WebAssembly. */
export const DEFAULT_PGLITE_COMPILER: PgliteCompiler = 'baseline';

/** The memory settings of the embedded database. */
export interface PgliteSettings {
  /** How V8 compiles its WebAssembly. Default {@link DEFAULT_PGLITE_COMPILER}. */
  compiler?: PgliteCompiler;
  /** Postgres's shared_buffers, in bytes (rounded down to whole kB, then to its 8 kB pages). Default {@link DEFAULT_PGLITE_SHARED_BUFFERS}. */
  sharedBuffers?: number;
}

/**
 * Postgres's start parameters for `settings`, after PGlite's own:
 *
 * - `shared_buffers`: the user's; the WAL buffers follow it (1/32, at least 64 kB);
 * - `max_connections=1`: PGlite is one connection, and Postgres sizes its
 *   shared tables (locks, processes) by this number;
 * - `work_mem=1MB`: a sort or hash larger than that goes to a temporary
 *   file; WebAssembly memory, once grown, is never given back;
 * - `maintenance_work_mem=8MB`: the migrations' CREATE INDEX on small tables.
 */
export function pgliteStartParams(settings: PgliteSettings = {}): string[] {
  const sharedBuffers = settings.sharedBuffers ?? DEFAULT_PGLITE_SHARED_BUFFERS;
  if (!Number.isSafeInteger(sharedBuffers) || sharedBuffers < MIN_PGLITE_SHARED_BUFFERS)
    throw new RangeError(
      `PGlite's shared buffers must be ${MIN_PGLITE_SHARED_BUFFERS} bytes or more, got ${sharedBuffers}`,
    );
  return [
    '-c',
    `shared_buffers=${Math.floor(sharedBuffers / 1024)}kB`,
    '-c',
    'max_connections=1',
    '-c',
    'work_mem=1MB',
    '-c',
    'maintenance_work_mem=8MB',
  ];
}
