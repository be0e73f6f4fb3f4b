/**
 * @module cli/module-files
 * The files of a module served alone: which ones it reads from the config
 * folder, read and checked as a start reads them, and read again, whole,
 * when they change or on SIGHUP.
 */
import { statSync } from 'node:fs';
import { errorText } from '../files';
import {
  loadFolder,
  watchFolder,
  type FolderWatcher,
  type FolderWants,
  type LoadedFolder,
  type LoadFolderOptions,
} from '../gatehouse';
import { ConfigError } from '../gateway';
import type { Logger } from '../telemetry';
import type { ServableModule } from './servable';

/** How long the config folder must be still before a change is read. */
const SETTLE_MS = 200;

const NONE: FolderWants = { records: false, limits: false, users: false, bookings: false };

/** What each module alone reads from the folder, and what its log says when a change is refused. */
const FILES: Record<Exclude<ServableModule, 'api'>, { wants: FolderWants; refused: string }> = {
  auth: { wants: { ...NONE, users: true }, refused: 'users file refused; the previous users stay' },
  ratelimit: { wants: { ...NONE, limits: true }, refused: 'rate limits refused; the previous limits stay' },
  'hotel-booking': {
    wants: { ...NONE, bookings: 'present' },
    refused: 'booking data refused; the previous catalogue stays',
  },
  'car-booking': {
    wants: { ...NONE, bookings: 'present' },
    refused: 'booking data refused; the previous catalogue stays',
  },
};

/** The module's files, read and checked as a start reads them; throws a {@link ConfigError} naming each file at fault. */
export async function loadFiles(
  name: Exclude<ServableModule, 'api'>,
  configDir: string,
  folder: LoadFolderOptions,
): Promise<LoadedFolder> {
  const files = await loadFolder(configDir, FILES[name].wants, folder);
  if (files.problems.length > 0) throw new ConfigError(files.problems);
  return files;
}

/**
 * A module's reload, one at a time: its files read and checked whole first
 * (off the event loop when large), then handed to the module with `use`.
 * Files with any problem are refused, logged with their names, and the
 * module keeps the ones it has. Never rejects.
 */
export function moduleReload(
  name: Exclude<ServableModule, 'api'>,
  configDir: string,
  folder: LoadFolderOptions,
  use: (files: LoadedFolder) => void,
  logger: Logger,
): () => Promise<void> {
  let queue: Promise<void> = Promise.resolve();
  const reload = async () => {
    const files = await loadFolder(configDir, FILES[name].wants, folder);
    if (files.problems.length > 0) {
      logger.error({ module: name, configDir, problems: files.problems.map((p) => p.text) }, FILES[name].refused);
      return;
    }
    use(files);
    logger.info({ module: name, configDir }, 'files reloaded');
  };
  return () =>
    (queue = queue
      .then(reload)
      .catch((err: unknown) => logger.error({ module: name, configDir, err: errorText(err) }, FILES[name].refused)));
}

/** Reloads a module when its folder changes ({@link moduleReload}) unless `watch` is false. */
export function watchModule(configDir: string, reload: () => Promise<void>, watch: boolean): FolderWatcher | undefined {
  return watch ? watchFolder(configDir, SETTLE_MS, () => void reload()) : undefined;
}

/**
 * Throws unless `dir` is a folder. A module reading its files from a folder
 * that is not there would otherwise serve without them (a rate-limit service
 * without limits answers OK to everything), as `start` refuses to.
 */
export function assertFolder(dir: string): void {
  let reason: string | undefined;
  try {
    if (!statSync(dir).isDirectory()) reason = 'not a folder';
  } catch (err) {
    reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : (err as Error).message;
  }
  if (reason) throw new Error(`${dir}: cannot read the config folder: ${reason}`);
}
