/**
 * @module gateway/config/record-files
 * Which files of a config folder hold the gateway's records, and reading
 * them within the size limit: a file that cannot be read is a problem of
 * its own, never the end of the load.
 */
import { join } from 'node:path';
import {
  DEFAULT_FILE_SIZE_LIMIT,
  errorCode,
  errorText,
  fileSystemSource,
  whyUnreadable,
  type ConfigFileSource,
} from '../../files';
import { configProblem, type ConfigProblem } from './problems';

/** How {@link loadConfig} reads the folder. */
export interface ReadOptions {
  /** Where the files are read from. Default: the file system. */
  source?: ConfigFileSource;
  /** The largest file read, in bytes; a larger one is a problem. Default 8 MiB. */
  fileSizeLimit?: number;
}

/** A config file's name and text. */
export interface ConfigFile {
  readonly file: string;
  readonly text: string;
}

/** The files of the built-in modules: the limits, and the booking data, each checked by its own reader. */
const SKIPPED = new Set(['ratelimit.yaml', 'ratelimit.yml', 'bookings.yaml']);

/** Whether a file name in the config folder is one the gateway reads. */
export function isGatewayConfigFile(name: string): boolean {
  return /\.ya?ml$/i.test(name) && !name.startsWith('.') && !SKIPPED.has(name.toLowerCase());
}

/** What reading a folder's record files gave: the texts, and a problem for each file that could not be read. */
export interface ReadRecordFiles {
  files: ConfigFile[];
  problems: ConfigProblem[];
}

/**
 * Reads the record files among `names` (the entries of `dir`): each at most
 * `fileSizeLimit` bytes, a folder of such a name passed over.
 */
export async function readRecordFiles(
  dir: string,
  names: readonly string[],
  options: ReadOptions = {},
): Promise<ReadRecordFiles> {
  const source = options.source ?? fileSystemSource;
  const limit = options.fileSizeLimit ?? DEFAULT_FILE_SIZE_LIMIT;
  const files: ConfigFile[] = [];
  const problems: ConfigProblem[] = [];
  for (const name of names.filter(isGatewayConfigFile).sort()) {
    const file = join(dir, name);
    try {
      files.push({ file, text: await source.read(file, limit) });
    } catch (err) {
      if (errorCode(err) !== 'EISDIR') problems.push(configProblem({ source: { file } }, whyUnreadable(err)));
    }
  }
  return { files, problems };
}

/** The problem of a config folder that cannot be listed. */
export function unreadableFolder(dir: string, err: unknown): ConfigProblem {
  const code = errorCode(err);
  const reason = code === 'ENOENT' ? 'no such folder' : code === 'ENOTDIR' ? 'not a folder' : errorText(err);
  return configProblem({ source: { file: dir } }, `cannot read the config folder: ${reason}`);
}
