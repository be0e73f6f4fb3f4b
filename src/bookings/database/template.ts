/**
 * @module bookings/database/template
 * The ready-made database a first start copies into its data folder. A new
 * PGlite database is made by initdb, which takes several times as long as
 * opening one, and whose WebAssembly instance keeps hundreds of megabytes
 * for as long as the process lives (memory a thread that ends does not give
 * back either). So it is made once, by `npm run build` (or, failing that, by
 * a process of its own on the first start that needs it), as a tar archive
 * named after the PGlite release that made it; a first start unpacks it,
 * every file synced, into the data folder.
 *
 * Run as a script (`node template.js <file>`), it makes the archive.
 */
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, extname, join } from 'node:path';
import * as tar from 'tar';

/** The folder of the package (beside `package.json`), from `src/` as from `dist/`. */
const PACKAGE_ROOT = join(__dirname, '..', '..', '..');

/** Where `npm run build` puts the ready-made databases: shipped with the package. */
export const PREBUILT_FOLDER = join(PACKAGE_ROOT, 'prebuilt');

/** The file Postgres writes first in a data folder it made: its absence means no database. */
const PG_VERSION = 'PG_VERSION';

/** The PGlite release installed beside this package. */
export function pgliteVersion(): string {
  // Its package.json is not exported: found beside its main file, dist/index.cjs.
  const main = require.resolve('@electric-sql/pglite');
  return (JSON.parse(readFileSync(join(dirname(main), '..', 'package.json'), 'utf8')) as { version: string }).version;
}

/** The archive's name for a PGlite release. */
export function templateName(version = pgliteVersion()): string {
  return `pglite-${version}.tar.gz`;
}

/** Whether `folder` holds a database (its PG_VERSION file). */
export function holdsDatabase(folder: string): boolean {
  return existsSync(join(folder, PG_VERSION));
}

/** The files and folders under `root`, folders before what they hold, in a stable order: the archive's entries. */
async function entriesOf(root: string, under = ''): Promise<string[]> {
  const entries: string[] = [];
  const names = (await readdir(join(root, under), { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  );
  for (const entry of names) {
    const path = under ? `${under}/${entry.name}` : entry.name;
    // Written by a running Postgres and removed by its close; a copy would say a server runs.
    if (path === 'postmaster.pid') continue;
    if (entry.isDirectory()) entries.push(path, ...(await entriesOf(root, path)));
    else if (entry.isFile()) entries.push(path);
  }
  return entries;
}

/**
 * Packs the database in `folder` (closed) into the gzipped tar archive
 * `file`: its folders and plain files, without the owner (user and group) of the
 * machine that made it; written whole or not at all.
 */
export async function packTemplate(folder: string, file: string): Promise<void> {
  const partial = `${file}.${process.pid}.partial`;
  try {
    await tar.create(
      { file: partial, cwd: folder, gzip: { level: 9 }, portable: true, noDirRecurse: true },
      await entriesOf(folder),
    );
    await rename(partial, file);
  } finally {
    await rm(partial, { force: true });
  }
}

/**
 * Makes the ready-made database at `file`: initdb in a folder of its own,
 * closed cleanly, packed and compressed; written whole or not at all.
 */
export async function makeTemplate(file: string): Promise<void> {
  const { PGlite } = require('@electric-sql/pglite') as typeof import('@electric-sql/pglite');
  const { NodeFS } = require('@electric-sql/pglite/nodefs') as typeof import('@electric-sql/pglite/nodefs');
  const work = await mkdtemp(join(tmpdir(), 'gatehouse-pglite-template-'));
  try {
    const db = await PGlite.create({ fs: new NodeFS(join(work, 'db')) });
    await db.close();
    await packTemplate(join(work, 'db'), file);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The script of this module, to run as a process: from the sources through tsx, as this one is. */
function scriptArgs(): string[] {
  const extension = extname(__filename);
  return [...(extension === '.ts' ? ['--require', 'tsx/cjs'] : []), __filename];
}

/**
 * The ready-made database for the installed PGlite: the one the package
 * ships, else one made earlier in the temporary folder, else one made now,
 * there, by a process of its own (so that initdb's memory goes with it).
 */
export async function templateFile(signal?: AbortSignal): Promise<string> {
  const name = templateName();
  const shipped = join(PREBUILT_FOLDER, name);
  if (existsSync(shipped)) return shipped;
  const cached = join(tmpdir(), `gatehouse-${process.getuid?.() ?? 0}-${name}`);
  if (existsSync(cached)) return cached;
  const child = spawn(process.execPath, [...scriptArgs(), cached], { stdio: ['ignore', 'ignore', 'pipe'], signal });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0 || !existsSync(cached))
    throw new Error(`making a new database failed (exit ${code}): ${stderr.trim()}`);
  return cached;
}

/** Syncs a file or folder to disk. */
async function syncPath(path: string, flags = 'r'): Promise<void> {
  const handle = await open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Runs `work` on every item, `width` at a time. */
async function eachAtOnce<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}

/** The plain files and the folders under `root` (not `root` itself), as unpacked there. */
async function unpackedUnder(root: string, found = { files: [] as string[], folders: [] as string[] }) {
  for (const entry of await readdir(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) {
      found.folders.push(path);
      await unpackedUnder(path, found);
    } else if (entry.isFile()) found.files.push(path);
  }
  return found;
}

/** The kinds of entry a Postgres data folder holds; a link or a device in the archive is refused. */
const DATABASE_ENTRY_TYPES = new Set(['File', 'OldFile', 'Directory']);

/**
 * Unpacks the gzipped tar archive `file` into the folder `into`, refusing
 * the whole archive for any entry that is damaged, that is not a plain file
 * or folder, or whose path is absolute or climbs out of `into` (node-tar's
 * own checks, made errors by `strict`).
 */
async function unpackArchive(file: string, into: string): Promise<void> {
  const refused: string[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const unpack = tar.extract({
        cwd: into,
        strict: true,
        preserveOwner: false,
        filter: (path, entry) => {
          const type = 'type' in entry ? entry.type : undefined;
          if (type !== undefined && DATABASE_ENTRY_TYPES.has(type)) return true;
          refused.push(`${path} (${type ?? 'unknown'})`);
          return false;
        },
      });
      // Streamed, not read by node-tar's `file`, which reads no more than the size it finds (none from a pipe).
      // A file that cannot be read fails the unpacking, which a pipe alone would leave waiting.
      const source = createReadStream(file).on('error', reject);
      // A refused archive is read no further.
      unpack
        .on('error', (err: Error) => {
          source.destroy();
          reject(err);
        })
        .on('close', resolve);
      source.pipe(unpack);
    });
  } catch (err) {
    throw new Error(`${file} is not a database archive that can be unpacked: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (refused.length > 0)
    throw new Error(
      `${file} is refused: it holds entries that are neither folders nor plain files: ${refused.join(', ')}`,
    );
}

/**
 * Unpacks the ready-made database `file` into `folder`, which must hold no
 * database: into a sibling folder first, every file and folder synced, then
 * renamed into place, so that a start stopped half-way (or a power cut)
 * leaves no half database where the next start would open it. The archive
 * streams through: it is never whole in memory.
 * @throws when `folder` holds files but no database: they are not removed.
 */
export async function installTemplate(file: string, folder: string): Promise<void> {
  const making = `${folder}.making`;
  // Left by a start stopped while it unpacked.
  await rm(making, { recursive: true, force: true });
  await mkdir(making, { mode: 0o700 });
  try {
    await unpackArchive(file, making);
    if (!holdsDatabase(making)) throw new Error(`${file} holds no database (no ${PG_VERSION})`);
    // node-tar does not sync what it writes: every file, then every folder, is synced before the rename.
    const made = await unpackedUnder(making);
    await eachAtOnce(made.files, 8, (path) => syncPath(path, 'r+'));
    await eachAtOnce([making, ...made.folders], 8, (path) => syncPath(path));
  } catch (err) {
    // Retried: writes the refused archive had begun may still be landing in the folder.
    await rm(making, { recursive: true, force: true, maxRetries: 5 });
    throw err;
  }
  // An empty folder (made by hand) gives way; one with files is not the first start's to remove.
  await rmdir(folder).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return;
    if (err.code === 'ENOTEMPTY' || err.code === 'EEXIST')
      throw new Error(`${folder} holds files but no database: move them away, or give another data folder`);
    throw err;
  });
  await rename(making, folder);
  await syncPath(dirname(folder));
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: template <file>: makes the ready-made database for the installed PGlite\n');
    process.exit(2);
  }
  makeTemplate(file).catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
