/**
 * @module ratelimit/limits/loader
 * Reads the limits from a config folder (`ratelimit.yaml`, or every YAML file
 * of its `ratelimit/` folder; one domain per YAML document), validates them
 * whole and compiles them. Any error names the file, the document and the
 * field, and nothing of a bad set is applied.
 *
 * The YAML is read as envoyproxy/ratelimit reads it (see limits-yaml) and
 * its keys checked as that service checks them (see limits-keys); a key it
 * would accept but ignore loads with a warning.
 */
import { lstatSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_FILE_SIZE_LIMIT, errorText, readBoundedTextSync, whyUnreadable } from '../../files';
import { compileLimits, LimitsCompileError, type LimitTable } from './index';
import { checkKeys } from './keys';
import { formatIssuePath, limitsDocumentSchema, type LimitsDocument } from './schema';
import { parseLimitsYaml, YamlProblems, type FieldPath, type ParsedDocument } from './yaml';

/** A limits configuration that cannot be used, with where it went wrong. */
export class LimitsConfigError extends Error {
  constructor(
    /** The file as shown to people (relative to the working folder when inside it). */
    readonly file: string,
    /** One line per problem: `descriptors[0].rate_limit.unit: must be one of ...`. */
    readonly problems: readonly string[],
  ) {
    super(problems.map((p) => `${file}: ${p}`).join('\n'));
    this.name = 'LimitsConfigError';
  }
}

/** Limits read from files, with the files they came from. */
export interface LoadedLimits {
  table: LimitTable;
  files: string[];
  /** What loads but has no effect, one line each: `file: path: why`. */
  warnings: string[];
  /** What each file holds: its domains, and its rules (limits and `unlimited` alike), in the order of `files`. */
  byFile?: LimitsFileContents[];
}

/** The domains of one limits file, and how many rules it gives them. */
export interface LimitsFileContents {
  file: string;
  domains: string[];
  rules: number;
}

/** Limits compiled from documents given in code, with their warnings. */
export interface CompiledLimits {
  table: LimitTable;
  warnings: string[];
}

/** The limits files directly in a config folder; `ratelimit/` holds more. */
export const LIMITS_FILES: readonly string[] = ['ratelimit.yaml', 'ratelimit.yml'];
/** The folder of a config folder whose YAML files are limits too. */
export const LIMITS_FOLDER = 'ratelimit';

/** A limits file as read: its path, and its text. */
export interface LimitsFile {
  readonly file: string;
  readonly text: string;
}

/** The file as shown to people: relative to the working folder when inside it. */
export function displayPath(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

/**
 * A limits file of `ratelimit/`: YAML and not hidden, as envoyproxy/ratelimit
 * reads its folder with `RUNTIME_IGNOREDOTFILES` (which Kubernetes
 * deployments set): editors' lock links (`.#a.yaml`), macOS's AppleDouble
 * files (`._a.yaml`) and swap files are not limits.
 */
export function isLimitsFileName(name: string): boolean {
  return !name.startsWith('.') && (name.endsWith('.yaml') || name.endsWith('.yml'));
}

/** Whether `file` names an entry, even a link to nowhere (which is then reported as unreadable, not passed over). */
function entryExists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

function isFolder(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

function listFiles(dir: string): string[] {
  const files: string[] = [];
  for (const name of LIMITS_FILES) {
    const file = path.join(dir, name);
    if (entryExists(file)) files.push(file);
  }
  const folder = path.join(dir, LIMITS_FOLDER);
  let names: string[] = [];
  try {
    names = readdirSync(folder);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR')
      throw new LimitsConfigError(displayPath(folder), [`cannot be read (${code ?? (err as Error).message})`]);
  }
  for (const name of names.filter(isLimitsFileName).sort()) {
    const file = path.join(folder, name);
    // Sub-folders are not read, whatever their name.
    if (!isFolder(file)) files.push(file);
  }
  return files;
}

function readLimitsFile(file: string, shown: string, limit: number): string {
  try {
    return readBoundedTextSync(file, limit);
  } catch (err) {
    throw new LimitsConfigError(shown, [whyUnreadable(err)]);
  }
}

/** A label per document: `file: ` or `file (document 2): ` when the file holds several. */
interface Labelled {
  doc: LimitsDocument;
  file: string;
  where: string;
  /** Where a field is written in the file; none for documents given in code. */
  lineOf?: ParsedDocument['lineOf'];
}

/**
 * `descriptors[0].rate_limit.unit: message (line 5)`: the path when there is
 * one, the line when known (at the end, as the YAML errors give theirs).
 */
function problemText(
  where: string,
  path: FieldPath,
  message: string,
  lineOf: ParsedDocument['lineOf'] | undefined,
): string {
  const line = lineOf?.(path);
  const at = formatIssuePath(path);
  return `${where}${at ? `${at}: ` : ''}${message}${line === undefined ? '' : ` (line ${line})`}`;
}

/**
 * Validates raw documents (as parsed from YAML) of one file, with where
 * their fields are written when they come from a file; its warnings are
 * added to `warnings`. Every problem of the file is reported, unknown keys
 * first.
 */
export function validateDocuments(
  raw: readonly unknown[],
  file: string,
  warnings: string[] = [],
  lines: readonly ParsedDocument['lineOf'][] = [],
): Labelled[] {
  const out: Labelled[] = [];
  const problems: string[] = [];
  raw.forEach((value, i) => {
    const lineOf = lines[i];
    const where = raw.length > 1 ? `(document ${i + 1}) ` : '';
    const keys = checkKeys(value);
    for (const w of keys.warnings) warnings.push(`${file}: ${where}${w}`);
    for (const p of keys.problems) problems.push(problemText(where, p.path, p.message, lineOf));
    const result = limitsDocumentSchema.safeParse(value);
    if (!result.success) {
      for (const issue of result.error.issues)
        problems.push(problemText(where, issue.path as FieldPath, issue.message, lineOf));
    } else if (keys.problems.length === 0) {
      out.push({ doc: result.data, file, where, lineOf });
    }
  });
  if (problems.length) throw new LimitsConfigError(file, problems);
  return out;
}

function parseYaml(text: string, file: string, warnings: string[]): ParsedDocument[] {
  const found: string[] = [];
  try {
    const docs = parseLimitsYaml(text, found);
    for (const w of found) warnings.push(`${file}: ${w}`);
    return docs;
  } catch (err) {
    if (err instanceof YamlProblems) throw new LimitsConfigError(file, err.problems);
    throw err;
  }
}

/** `descriptors[0].share_threshold` as a path. */
function parsePath(text: string): FieldPath {
  const path: (string | number)[] = [];
  for (const m of text.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) path.push(m[2] === undefined ? m[1] : Number(m[2]));
  return path;
}

/** Compiles labelled documents; a duplicate is reported against its file and line. */
export function compileLabelled(docs: readonly Labelled[]): LimitTable {
  try {
    return compileLimits(docs.map((d) => d.doc));
  } catch (err) {
    if (!(err instanceof LimitsCompileError)) throw err;
    const d = docs[err.document];
    throw new LimitsConfigError(d.file, [problemText(d.where, parsePath(err.path), err.reason, d.lineOf)]);
  }
}

/** Validates and compiles documents given in code, e.g. by a test or an embedding app. */
export function compileDocuments(raw: readonly unknown[], label = '<limits>'): LimitTable {
  return compileDocumentsWithWarnings(raw, label).table;
}

/** {@link compileDocuments}, with what loads but has no effect. */
export function compileDocumentsWithWarnings(raw: readonly unknown[], label = '<limits>'): CompiledLimits {
  const warnings: string[] = [];
  return { table: compileLabelled(validateDocuments(raw, label, warnings)), warnings };
}

/**
 * Validates and compiles the limits of files already read (pure: no file
 * access). Throws a {@link LimitsConfigError} naming the first file with a
 * problem, whatever the problem was. A file with no document is refused,
 * as in envoyproxy/ratelimit.
 */
export function parseLimitsFiles(files: readonly LimitsFile[]): LoadedLimits {
  const docs: Labelled[] = [];
  const warnings: string[] = [];
  const byFile: LimitsFileContents[] = [];
  for (const { file, text } of files) {
    const first = docs.length;
    const shown = displayPath(file);
    try {
      const raw = parseYaml(text, shown, warnings);
      // A file emptied by mistake (or caught half-written by a reload) would
      // otherwise drop every limit it held, silently.
      if (raw.length === 0) {
        throw new LimitsConfigError(shown, [
          'holds no limits: every file needs a domain (envoyproxy/ratelimit refuses an empty one too); remove the file for none',
        ]);
      }
      docs.push(
        ...validateDocuments(
          raw.map((d) => d.value),
          shown,
          warnings,
          raw.map((d) => (path: FieldPath) => d.lineOf(path)),
        ),
      );
      const own = docs.slice(first).map((d) => d.doc);
      byFile.push({
        file,
        domains: own.map((d) => d.domain),
        rules: own.reduce((n, d) => n + ruleCount(d.descriptors), 0),
      });
    } catch (err) {
      if (err instanceof LimitsConfigError) throw err;
      throw new LimitsConfigError(shown, [`cannot be read as limits: ${errorText(err)}`]);
    }
  }
  let table: LimitTable;
  try {
    table = compileLabelled(docs);
  } catch (err) {
    if (err instanceof LimitsConfigError) throw err;
    throw new LimitsConfigError(files.map((f) => displayPath(f.file)).join(', '), [
      `cannot be compiled: ${errorText(err)}`,
    ]);
  }
  return { table, files: files.map((f) => f.file), warnings, byFile };
}

/** The rules among `descriptors` and those nested in them. */
function ruleCount(descriptors: LimitsDocument['descriptors']): number {
  let n = 0;
  for (const d of descriptors ?? []) n += (d.rate_limit ? 1 : 0) + ruleCount(d.descriptors);
  return n;
}

/**
 * Reads, validates and compiles every limits file of a config folder (a few
 * small files: read synchronously, so a service is whole once built), each
 * at most `fileSizeLimit` bytes. No file at all is not an error: every
 * request is then answered OK.
 */
export function loadLimitsDir(dir: string, fileSizeLimit: number = DEFAULT_FILE_SIZE_LIMIT): LoadedLimits {
  const files = listFiles(dir).map((file) => ({ file, text: readLimitsFile(file, displayPath(file), fileSizeLimit) }));
  return parseLimitsFiles(files);
}
