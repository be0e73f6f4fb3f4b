/**
 * @module ratelimit/limits-loader
 * Reads the limits from a config folder (`ratelimit.yaml`, or every YAML file
 * of its `ratelimit/` folder; one domain per YAML document), validates them
 * whole and compiles them. Any error names the file, the document and the
 * field, and nothing of a bad set is applied.
 *
 * envoyproxy/ratelimit reads these files with Go's yaml.v2 into typed
 * fields, so the YAML is read as it does: merge keys (`<<: *anchor`) apply,
 * and a string field keeps its text as written (`value: 00123` is "00123",
 * not 123), where YAML 1.2 alone would make a number or a boolean of it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isAlias, isScalar, parseAllDocuments, Scalar, visit, type Document } from 'yaml';
import { compileLimits, LimitsCompileError, type LimitTable } from './limits';
import { formatIssuePath, limitsDocumentSchema, type LimitsDocument } from './limits-schema';

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
}

function displayPath(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

function isYaml(name: string): boolean {
  return name.endsWith('.yaml') || name.endsWith('.yml');
}

function listFiles(dir: string): string[] {
  const files: string[] = [];
  for (const name of ['ratelimit.yaml', 'ratelimit.yml']) {
    const file = path.join(dir, name);
    if (existsSync(file)) files.push(file);
  }
  let names: string[] = [];
  try {
    names = readdirSync(path.join(dir, 'ratelimit'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  for (const name of names.filter(isYaml).sort()) files.push(path.join(dir, 'ratelimit', name));
  return files;
}

/** A label per document: `file: ` or `file (document 2): ` when the file holds several. */
interface Labelled {
  doc: LimitsDocument;
  file: string;
  where: string;
}

/** Validates raw documents (as parsed from YAML) of one file. */
export function validateDocuments(raw: readonly unknown[], file: string): Labelled[] {
  const out: Labelled[] = [];
  const problems: string[] = [];
  raw.forEach((value, i) => {
    const where = raw.length > 1 ? `(document ${i + 1}) ` : '';
    const parsed = limitsDocumentSchema.safeParse(value);
    if (parsed.success) {
      out.push({ doc: parsed.data, file, where });
      return;
    }
    for (const issue of parsed.error.issues) {
      const at = formatIssuePath(issue.path);
      problems.push(`${where}${at ? `${at}: ` : ''}${issue.message}`);
    }
  });
  if (problems.length) throw new LimitsConfigError(file, problems);
  return out;
}

/** The fields of the format that envoyproxy/ratelimit reads as strings. */
const STRING_FIELDS = new Set(['domain', 'key', 'value', 'name', 'unit']);

/**
 * Gives every string field whose YAML value reads as a number or a boolean
 * its source text instead, as yaml.v2 fills a Go string. A null stays null
 * (the schema reads it as "", Go's zero value). Runs on the document before
 * toJS, so an anchored mapping is fixed where it is written and every merge
 * of it copies the text.
 */
function keepStringFieldsAsWritten(doc: Document): void {
  visit(doc, {
    Pair(_, pair) {
      if (!isScalar(pair.key) || !STRING_FIELDS.has(pair.key.value as string)) return;
      const node = isAlias(pair.value) ? pair.value.resolve(doc) : pair.value;
      if (!isScalar(node) || node.value === null || typeof node.value === 'string' || node.source === undefined) return;
      // An alias may point at a node another field reads as a number: give this field its own copy.
      if (node === pair.value) node.value = node.source;
      else pair.value = new Scalar(node.source);
    },
  });
}

function parseYaml(text: string, file: string): unknown[] {
  const docs = parseAllDocuments(text, { merge: true });
  const list = Array.isArray(docs) ? docs : [docs];
  const problems: string[] = [];
  const values: unknown[] = [];
  list.forEach((doc, i) => {
    const where = list.length > 1 ? `(document ${i + 1}) ` : '';
    for (const err of doc.errors) problems.push(`${where}${err.message.split('\n')[0]}`);
    if (doc.errors.length) return;
    let value: unknown;
    try {
      keepStringFieldsAsWritten(doc);
      value = doc.toJS();
    } catch (err) {
      // A merge of something that is not a mapping, too many aliases: found only when converting.
      problems.push(`${where}${(err as Error).message.split('\n')[0]}`);
      return;
    }
    // An empty document (a trailing `---`, a file of comments) holds no domain.
    if (value !== null && value !== undefined) values.push(value);
  });
  if (problems.length) throw new LimitsConfigError(file, problems);
  return values;
}

/** Compiles labelled documents; a duplicate is reported against its file. */
export function compileLabelled(docs: readonly Labelled[]): LimitTable {
  try {
    return compileLimits(docs.map((d) => d.doc));
  } catch (err) {
    if (!(err instanceof LimitsCompileError)) throw err;
    const d = docs[err.document];
    throw new LimitsConfigError(d.file, [`${d.where}${err.path}: ${err.reason}`]);
  }
}

/** Validates and compiles documents given in code, e.g. by a test or an embedding app. */
export function compileDocuments(raw: readonly unknown[], label = '<limits>'): LimitTable {
  return compileLabelled(validateDocuments(raw, label));
}

/**
 * Reads, validates and compiles every limits file of a config folder (a few
 * small files: read synchronously, so a service is whole once built). No file
 * at all is not an error: every request is then answered OK.
 */
export function loadLimitsDir(dir: string): LoadedLimits {
  const files = listFiles(dir);
  const docs: Labelled[] = [];
  for (const file of files) {
    const shown = displayPath(file);
    const text = readFileSync(file, 'utf8');
    docs.push(...validateDocuments(parseYaml(text, shown), shown));
  }
  return { table: compileLabelled(docs), files };
}
