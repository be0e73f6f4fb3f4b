/**
 * @module bookings/database/pglite-folder
 * The data folder PGlite keeps its database in: made (with the parents it
 * lacks) and locked for this process before anything is opened in it, so
 * that a folder that cannot be used, or that another process holds, is
 * said at once, before a start serves anything.
 */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { errorText } from './errors';
import { lockFolder, type FolderLock } from './folder-lock';

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

/** A data folder made and locked for this process: the database is in its {@link PGLITE_FOLDER}. */
export interface ReservedFolder {
  /** The data folder, absolute. */
  readonly folder: string;
  /** The database's own folder in it. */
  readonly dbFolder: string;
  /** Whether a database is there already (a later start); without one, the first start puts it there. */
  readonly holdsDatabase: boolean;
  /** Unlocks the folder. */
  release(): Promise<void>;
}

/**
 * Makes the data folder unless it exists and locks it for this process.
 * @throws when it cannot be made or written, or another process holds it (a DataFolderInUseError).
 */
export async function reservePgliteFolder(dataFolder: string): Promise<ReservedFolder> {
  const folder = resolve(dataFolder);
  makeDataFolder(folder);
  const lock: FolderLock = await lockFolder(folder);
  const dbFolder = join(folder, PGLITE_FOLDER);
  let holdsDatabase = false;
  try {
    holdsDatabase = statSync(join(dbFolder, 'PG_VERSION')).isFile();
  } catch {
    // No database yet.
  }
  return { folder, dbFolder, holdsDatabase, release: () => lock.release() };
}
