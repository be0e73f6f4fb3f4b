/**
 * @module gatehouse/folder/read
 * Reads the files of a config folder through a file source, each at most
 * the file size limit: the records, the limits (`ratelimit.yaml` and
 * `ratelimit/`), `users.htpasswd` and `bookings.yaml`. Nothing is parsed
 * here; every file that cannot be read is a problem naming it, and every
 * entry of the folder is listed with what it is read as, or why not.
 */
import { join, relative } from 'node:path';
import { USERS_FILE } from '../../auth';
import { BOOKINGS_FILE } from '../../bookings';
import { errorCode, whyUnreadable, type ConfigFileSource } from '../../files';
import {
  configProblem,
  isGatewayConfigFile,
  readRecordFiles,
  unreadableFolder,
  type ConfigFile,
  type ConfigProblem,
} from '../../gateway';
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

/** What an entry of the folder is read as. */
export type EntryKind = 'records' | 'limits' | 'users' | 'bookings' | 'ignored';

/** An entry of the config folder (or of its `ratelimit/`), and what it is read as, or why it is not. */
export interface FolderEntry {
  /** Relative to the config folder: `services.yaml`, `ratelimit/a.yaml`. */
  readonly name: string;
  readonly kind: EntryKind;
  /** Why it is ignored. */
  readonly why?: string;
}

/** What reading gave: the texts, a problem for every file that could not be read, and every entry of the folder. */
export interface ReadFolder {
  texts: FolderTexts;
  problems: ConfigProblem[];
  entries: FolderEntry[];
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

/** Why an entry of the folder that no kind claims is not read. */
function whyIgnored(name: string, isFolder = false): string {
  if (name.startsWith('.')) return 'hidden';
  if (isFolder) return 'a folder: only ratelimit/ is read';
  const lower = name.toLowerCase();
  if (LIMITS_FILES.includes(lower) || lower === BOOKINGS_FILE || lower === USERS_FILE)
    return `not read: the name is spelt ${lower}`;
  return `not read: neither YAML (*.yaml, *.yml) nor ${USERS_FILE}`;
}

/** The limits files: `ratelimit.yaml` / `.yml` when listed, then the YAML files of `ratelimit/` (no sub-folders). */
async function readLimits(
  dir: string,
  names: readonly string[],
  options: ReadFolderOptions,
  problems: ConfigProblem[],
  entries: FolderEntry[],
): Promise<LimitsFile[]> {
  const named = LIMITS_FILES.filter((name) => names.includes(name)).map((name) => join(dir, name));
  const found: string[] = [...named];
  const folder = join(dir, LIMITS_FOLDER);
  if (names.includes(LIMITS_FOLDER)) {
    try {
      for (const name of (await options.source.list(folder)).sort()) {
        if (isLimitsFileName(name)) found.push(join(folder, name));
        else entries.push({ name: `${LIMITS_FOLDER}/${name}`, kind: 'ignored', why: whyIgnored(name) });
      }
    } catch (err) {
      const code = errorCode(err);
      if (code === 'ENOTDIR') entries.push({ name: LIMITS_FOLDER, kind: 'ignored', why: 'not a folder' });
      else if (code !== 'ENOENT')
        problems.push(configProblem({ source: { file: displayPath(folder) } }, whyUnreadable(err)));
    }
  }
  const files: LimitsFile[] = [];
  for (const file of found) {
    // A folder named ratelimit.yaml is a mistake to tell, not an absence that would drop every limit; one in ratelimit/ is passed over.
    const read = await readOne(file, displayPath(file), options, problems, named.includes(file));
    const name = relative(dir, file);
    if (read) files.push(read);
    entries.push(
      read || named.includes(file)
        ? { name, kind: 'limits' }
        : { name, kind: 'ignored', why: 'a folder: sub-folders of ratelimit/ are not read' },
    );
  }
  return files;
}

/**
 * The entries of the folder that no kind read claims, with why; a name of
 * a kind not read (`wants`) is not read by the modules in service.
 */
function otherEntries(names: readonly string[], claimed: ReadonlySet<string>, wants: FolderWants): FolderEntry[] {
  const notWanted = (kind: keyof FolderWants) => wants[kind] === false;
  const entries: FolderEntry[] = [];
  for (const name of names) {
    if (claimed.has(name)) continue;
    const kind: keyof FolderWants | undefined = isGatewayConfigFile(name)
      ? 'records'
      : LIMITS_FILES.includes(name) || name === LIMITS_FOLDER
        ? 'limits'
        : name === USERS_FILE
          ? 'users'
          : name === BOOKINGS_FILE
            ? 'bookings'
            : undefined;
    if (kind !== undefined && notWanted(kind))
      entries.push({ name, kind: 'ignored', why: `not read: no module in service reads ${kind}` });
    else entries.push({ name, kind: 'ignored', why: whyIgnored(name) });
  }
  return entries;
}

/** Reads the files of `dir` that `wants` names. Never rejects: a source that fails is a problem of what it was asked for. */
export async function readFolder(dir: string, wants: FolderWants, options: ReadFolderOptions): Promise<ReadFolder> {
  const problems: ConfigProblem[] = [];
  const entries: FolderEntry[] = [];
  const texts: FolderTexts = { annotationDomain: options.annotationDomain, ambassadorId: options.ambassadorId };
  let names: string[];
  try {
    names = await options.source.list(dir);
    if (!Array.isArray(names)) throw new TypeError('the file source listed no names');
  } catch (err) {
    return { texts, problems: [unreadableFolder(dir, err)], entries };
  }
  names = [...names].sort();
  const claimed = new Set<string>();
  if (wants.records) {
    const records = await readRecordFiles(dir, names, { source: options.source, fileSizeLimit: options.fileSizeLimit });
    texts.records = records.files;
    problems.push(...records.problems);
    const unread = new Set(records.problems.map((p) => p.file));
    const read = new Set(records.files.map((f) => f.file));
    for (const name of names.filter(isGatewayConfigFile)) {
      claimed.add(name);
      const file = join(dir, name);
      // Passed over by readRecordFiles when it is neither read nor a problem: a folder of a YAML name.
      entries.push(
        read.has(file) || unread.has(file)
          ? { name, kind: 'records' }
          : { name, kind: 'ignored', why: whyIgnored(name, true) },
      );
    }
  }
  if (wants.limits) {
    texts.limits = await readLimits(dir, names, options, problems, entries);
    for (const name of [...LIMITS_FILES, LIMITS_FOLDER]) if (names.includes(name)) claimed.add(name);
  }
  for (const [kind, name] of [
    ['users', USERS_FILE],
    ['bookings', BOOKINGS_FILE],
  ] as const) {
    const wanted = wants[kind];
    if (wanted === false || (wanted === 'present' && !names.includes(name))) continue;
    const file = join(dir, name);
    texts[kind] = await readOne(file, file, options, problems, true);
    if (names.includes(name)) {
      claimed.add(name);
      entries.push({ name, kind });
    }
  }
  entries.push(...otherEntries(names, claimed, wants));
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { texts, problems, entries };
}
