/**
 * @module gatehouse/folder/read
 * Reads the files of a config folder through a file source, each at most
 * the file size limit: the records, the limits (`ratelimit.yaml` and
 * `ratelimit/`), `users.htpasswd` and `bookings.yaml`. Nothing is parsed
 * here; every file that cannot be read is a problem naming it.
 */
import { join } from 'node:path';
import { USERS_FILE } from '../../auth';
import { BOOKINGS_FILE } from '../../bookings';
import { errorCode, whyUnreadable, type ConfigFileSource } from '../../files';
import { configProblem, readRecordFiles, unreadableFolder, type ConfigFile, type ConfigProblem } from '../../gateway';
import { displayPath, isLimitsFileName, LIMITS_FILES, LIMITS_FOLDER, type LimitsFile } from '../../ratelimit';

/**
 * Which files to read. `'present'`: when the folder has one, as a start reads
 * them (a folder without a users file has no built-in auth service); `true`:
 * the file must be there, as a reload reads the file of a module in service.
 */
export interface FolderWants {
  records: boolean;
  limits: boolean;
  users: boolean | 'present';
  bookings: boolean | 'present';
}

/** The texts of a folder's files, as the checks take them; a kind not read is absent. */
export interface FolderTexts {
  annotationDomain?: string;
  /** This gateway's `ambassador_id`: the records served are those that name it. */
  ambassadorId?: string;
  records?: ConfigFile[];
  limits?: LimitsFile[];
  users?: ConfigFile;
  bookings?: ConfigFile;
}

/** What reading gave: the texts, and a problem for every file that could not be read. */
export interface ReadFolder {
  texts: FolderTexts;
  problems: ConfigProblem[];
}

export interface ReadFolderOptions {
  source: ConfigFileSource;
  fileSizeLimit: number;
  annotationDomain?: string;
  ambassadorId?: string;
}

/**
 * Reads one file, or adds why it could not be read to `problems`. A folder
 * of the name is passed over where names are matched by a pattern, and a
 * problem where the name is the file's own.
 */
async function readOne(
  file: string,
  shown: string,
  options: ReadFolderOptions,
  problems: ConfigProblem[],
  folderIsProblem = false,
): Promise<ConfigFile | undefined> {
  try {
    const text = await options.source.read(file, options.fileSizeLimit);
    if (typeof text !== 'string')
      throw new TypeError(`the file source gave ${text === null ? 'null' : typeof text}, not text`);
    return { file, text };
  } catch (err) {
    if (errorCode(err) !== 'EISDIR') problems.push(configProblem({ source: { file: shown } }, whyUnreadable(err)));
    else if (folderIsProblem) problems.push(configProblem({ source: { file: shown } }, 'is a folder, not a file'));
    return undefined;
  }
}

/** The limits files: `ratelimit.yaml` / `.yml` when listed, then the YAML files of `ratelimit/` (no sub-folders). */
async function readLimits(
  dir: string,
  names: readonly string[],
  options: ReadFolderOptions,
  problems: ConfigProblem[],
): Promise<LimitsFile[]> {
  const named = LIMITS_FILES.filter((name) => names.includes(name)).map((name) => join(dir, name));
  const found: string[] = [...named];
  const folder = join(dir, LIMITS_FOLDER);
  if (names.includes(LIMITS_FOLDER)) {
    try {
      for (const name of (await options.source.list(folder)).filter(isLimitsFileName).sort())
        found.push(join(folder, name));
    } catch (err) {
      const code = errorCode(err);
      if (code !== 'ENOENT' && code !== 'ENOTDIR')
        problems.push(configProblem({ source: { file: displayPath(folder) } }, whyUnreadable(err)));
    }
  }
  const files: LimitsFile[] = [];
  for (const file of found) {
    // A folder named ratelimit.yaml is a mistake to tell, not an absence that would drop every limit; one in ratelimit/ is passed over.
    const read = await readOne(file, displayPath(file), options, problems, named.includes(file));
    if (read) files.push(read);
  }
  return files;
}

/** Reads the files of `dir` that `wants` names. Never rejects: a source that fails is a problem of what it was asked for. */
export async function readFolder(dir: string, wants: FolderWants, options: ReadFolderOptions): Promise<ReadFolder> {
  const problems: ConfigProblem[] = [];
  const texts: FolderTexts = { annotationDomain: options.annotationDomain, ambassadorId: options.ambassadorId };
  let names: string[];
  try {
    names = await options.source.list(dir);
    if (!Array.isArray(names)) throw new TypeError('the file source listed no names');
  } catch (err) {
    return { texts, problems: [unreadableFolder(dir, err)] };
  }
  if (wants.records) {
    const records = await readRecordFiles(dir, names, { source: options.source, fileSizeLimit: options.fileSizeLimit });
    texts.records = records.files;
    problems.push(...records.problems);
  }
  if (wants.limits) texts.limits = await readLimits(dir, names, options, problems);
  for (const [kind, name] of [
    ['users', USERS_FILE],
    ['bookings', BOOKINGS_FILE],
  ] as const) {
    const wanted = wants[kind];
    if (wanted === false || (wanted === 'present' && !names.includes(name))) continue;
    const file = join(dir, name);
    texts[kind] = await readOne(file, file, options, problems, true);
  }
  return { texts, problems };
}
