/**
 * @module gateway/config/load
 * Reads the gateway's records from a config folder.
 *
 * The rule, file by file and document by document:
 * - Every `*.yaml` / `*.yml` file directly in the folder is read (no
 *   sub-folders, no dotfiles), in name order, except `ratelimit.yaml` /
 *   `ratelimit.yml`, which hold the rate-limit service's own limits, and
 *   `bookings.yaml`, the booking modules' data.
 * - A document whose `kind` is a gateway kind (`Mapping`, `AuthService`,
 *   `RateLimitService`) or whose `apiVersion` starts with `gateway/` is a
 *   record, validated as one.
 * - Any other document with `kind` and `metadata` is a Kubernetes-style
 *   manifest (a `Service`, typically). The annotation `<domain>/config` of its
 *   `metadata.annotations`, when there is one, is a YAML string of one or more
 *   records separated by `---`; every document in it is a record. The
 *   manifest's `metadata.name` names it in messages.
 * - Emissary's resources (`apiVersion: getambassador.io/...`) and the
 *   records of its `getambassador.io/config` annotation are read as the
 *   records they become (see ./emissary); a `kind: List` gives its items.
 *   Every record is served only when its `ambassador_id` names this
 *   gateway's (`default` when it names none).
 * - Every other document (data files, an envoy rate-limit config with
 *   `domain` and `descriptors`) is no gateway record and is ignored.
 * - A file with no document at all (empty, blank, only comments or `---`)
 *   is refused: it is what a reload sees of a file being written over.
 */
import { readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isScalar, parseAllDocuments, type Document, type YAMLError } from 'yaml';
import { configProblem, type ConfigProblem } from './problems';
import type { RecordSource } from './schema';
import { API_VERSION } from './schema';
import { RECORD_KINDS, type ConfigResult, type RawRecord } from './validate';
import { assembleWithEmissary, EMISSARY_ANNOTATION, expandLists, readEmissaryDocument, type EmissaryReading } from './emissary';

export interface LoadOptions {
  /** The domain part of the annotation key `<domain>/config`. Default `gatehouse.io`. */
  annotationDomain?: string;
  /** This gateway's `ambassador_id`: the records it serves name it, or none (`default`). Default `default`. */
  ambassadorId?: string;
}

/** A configuration as loaded, with what `gatehouse check` says of its Emissary resources. */
export type LoadedConfig = ConfigResult & EmissaryReading;

/** A config file's name and text. */
export interface ConfigFile {
  readonly file: string;
  readonly text: string;
}

/** The files of the built-in modules: the limits, and the booking data, each checked by its own reader. */
const SKIPPED = new Set(['ratelimit.yaml', 'ratelimit.yml', 'bookings.yaml']);
const EMPTY_FILE = 'holds no YAML document (it is empty, or only comments): refused, since a file caught while it is being written would drop its records; delete the file to have none';
const API_GROUP = API_VERSION.slice(0, API_VERSION.indexOf('/') + 1);

/** Whether a file name in the config folder is one the gateway reads. */
export function isGatewayConfigFile(name: string): boolean {
  return /\.ya?ml$/i.test(name) && !name.startsWith('.') && !SKIPPED.has(name.toLowerCase());
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstLine(message: string): string {
  return message.split('\n', 1)[0].replace(/:$/, '');
}

/**
 * The first error found on each line: the parser's errors after a bad line
 * (a tab in the indentation) are what it made of the rest of that line.
 */
function onePerLine(errors: readonly YAMLError[]): YAMLError[] {
  const seen = new Set<number | undefined>();
  return errors.filter((err) => {
    const line = err.linePos?.[0].line;
    if (line !== undefined && seen.has(line)) return false;
    seen.add(line);
    return true;
  });
}

/** A document of a YAML stream and its place in it (1-based), for messages. */
interface ParsedDocument {
  value: unknown;
  index: number;
  node: Document.Parsed;
}

/**
 * Parses a YAML stream; documents with errors become problems and are left
 * out. `lineOffset` is where the text starts in its file, when it is part of
 * one (an annotation), so that positions name lines of the file.
 */
function parseDocuments(text: string, source: RecordSource, what: string, problems: ConfigProblem[], lineOffset?: LineOffset): ParsedDocument[] {
  const docs: ParsedDocument[] = [];
  let index = 0;
  for (const doc of parseAllDocuments(text, { prettyErrors: true })) {
    index++;
    if (doc.errors.length > 0) {
      for (const err of onePerLine(doc.errors)) problems.push(configProblem({ source }, `${what}: ${positionInFile(firstLine(err.message), lineOffset)}`));
      continue;
    }
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value !== null && value !== undefined) docs.push({ value, index, node: doc });
  }
  return docs;
}

/** Where an annotation's text starts in its file: lines before it, and the indentation taken off each line. */
interface LineOffset {
  lines: number;
  indent: number;
}

/** Rewrites yaml's `at line L, column C` from a position in an annotation to one in its file. */
function positionInFile(message: string, offset: LineOffset | undefined): string {
  if (offset === undefined) return message;
  return message.replace(/at line (\d+), column (\d+)/, (_m, line: string, column: string) => {
    return `at line ${Number(line) + offset.lines}, column ${Number(column) + offset.indent} of the file`;
  });
}

/**
 * The offset of a block scalar (`|` or `>`), which is how annotations of
 * records are written; undefined for a quoted or plain string, whose lines
 * do not map one to one.
 */
function annotationOffset(doc: Document.Parsed, path: readonly (string | number)[], fileText: string): LineOffset | undefined {
  const node = doc.getIn(path, true);
  if (!isScalar(node) || (node.type !== 'BLOCK_LITERAL' && node.type !== 'BLOCK_FOLDED') || !node.range) return undefined;
  const start = node.range[0];
  // The header line (`|`) ends the line the scalar starts on; the content begins after it.
  const headerEnd = fileText.indexOf('\n', start);
  if (headerEnd === -1) return undefined;
  const lines = fileText.slice(0, headerEnd + 1).split('\n').length - 1;
  const firstContent = fileText.slice(headerEnd + 1).match(/^( *)\S/m);
  return { lines, indent: firstContent ? firstContent[1].length : 0 };
}

function isRecordDocument(doc: Record<string, unknown>): boolean {
  const { kind, apiVersion } = doc;
  return (typeof kind === 'string' && RECORD_KINDS.includes(kind)) || (typeof apiVersion === 'string' && apiVersion.startsWith(API_GROUP));
}

function isManifest(doc: Record<string, unknown>): doc is Record<string, unknown> & { metadata: Record<string, unknown> } {
  return typeof doc.kind === 'string' && isPlainObject(doc.metadata);
}

/**
 * Reads the records of already-read files by the folder rule (see the module
 * comment) and validates them. The configuration's `sources` are the files
 * that held records. Pure: no file access.
 */
export function parseConfigFiles(files: readonly ConfigFile[], options: LoadOptions = {}): LoadedConfig {
  const annotation = `${options.annotationDomain ?? 'gatehouse.io'}/config`;
  // Emissary's annotation is read beside the gateway's own, unless the domain makes them one.
  const annotationKeys = annotation === EMISSARY_ANNOTATION ? [annotation] : [annotation, EMISSARY_ANNOTATION];
  const problems: ConfigProblem[] = [];
  const records: RawRecord[] = [];

  for (const { file, text } of files) {
    const fileSource: RecordSource = { file };
    const before = problems.length;
    const documents = parseDocuments(text, fileSource, 'YAML', problems);
    if (documents.length === 0 && problems.length === before) {
      // What a reload sees of a file being written over: truncated, or only its heading comments so far.
      problems.push(configProblem({ source: fileSource }, EMPTY_FILE));
      continue;
    }
    for (const { value: doc, index, node, path } of expandLists(documents)) {
      if (Array.isArray(doc)) {
        // A list of records is no way of writing them; said, rather than passed over in silence.
        if (doc.some((item) => isPlainObject(item) && isRecordDocument(item))) {
          problems.push(
            configProblem({ source: fileSource }, `document ${index} is a list of records: write each record as a document of its own, separated by ---`),
          );
        }
        continue;
      }
      if (!isPlainObject(doc)) continue;
      const emissary = readEmissaryDocument(doc, { source: fileSource, index });
      if (emissary !== undefined) {
        records.push(...emissary);
        continue;
      }
      if (isRecordDocument(doc)) {
        records.push({ value: doc, source: fileSource, index });
        continue;
      }
      if (!isManifest(doc)) continue;
      const annotations = doc.metadata.annotations;
      const service = typeof doc.metadata.name === 'string' ? doc.metadata.name : undefined;
      const source: RecordSource = service === undefined ? { file } : { file, service };
      if (annotations === undefined || annotations === null) continue;
      if (!isPlainObject(annotations)) {
        problems.push(configProblem({ source, path: 'metadata.annotations' }, 'expected a mapping'));
        continue;
      }
      const namespace = typeof doc.metadata.namespace === 'string' ? doc.metadata.namespace : undefined;
      for (const key of annotationKeys) {
        const value = annotations[key];
        if (value === undefined) continue;
        if (typeof value !== 'string') {
          problems.push(configProblem({ source, path: `metadata.annotations.${key}` }, 'expected a YAML string of records'));
          continue;
        }
        const offset = annotationOffset(node, [...path, 'metadata', 'annotations', key], text);
        for (const record of parseDocuments(value, source, `annotation ${key}: YAML`, problems, offset)) {
          const place = { source, index: record.index, annotation: key, namespace };
          records.push(...(readEmissaryDocument(record.value, place) ?? [{ value: record.value, source, index: record.index }]));
        }
      }
    }
  }
  const sources = [...new Set(records.map((r) => r.source!.file))];
  return assembleWithEmissary(records, sources, problems, { ambassadorId: options.ambassadorId });
}

/** Why a file cannot be read, in words: `cannot be read (EACCES)`, or the link to nowhere it is. */
async function unreadable(file: string, err: unknown): Promise<string> {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') {
    const target = await readlink(file).catch(() => undefined);
    // Listed, yet not there: a link whose target is gone (or the file went between the two).
    if (target !== undefined) return `is a symbolic link to ${target}, which does not exist`;
  }
  return `cannot be read (${code ?? (err as Error).message})`;
}

/**
 * Reads every gateway config file of `dir` (see the module comment for which)
 * and validates the records in them. Resolves to the whole configuration or to
 * every problem found, each naming file, service, record and field.
 */
export async function loadConfig(dir: string, options: LoadOptions = {}): Promise<LoadedConfig> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter(isGatewayConfigFile).sort();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such folder' : code === 'ENOTDIR' ? 'not a folder' : (err as Error).message;
    return { ok: false, problems: [configProblem({ source: { file: dir } }, `cannot read the config folder: ${reason}`)] };
  }
  const files: ConfigFile[] = [];
  const problems: ConfigProblem[] = [];
  for (const name of names) {
    const file = join(dir, name);
    try {
      if (!(await stat(file)).isFile()) continue;
      files.push({ file, text: await readFile(file, 'utf8') });
    } catch (err) {
      problems.push(configProblem({ source: { file } }, await unreadable(file, err)));
    }
  }
  const result = parseConfigFiles(files, options);
  if (problems.length === 0) return result;
  return { ok: false, problems: [...problems, ...(result.ok ? [] : result.problems)], emissary: result.emissary };
}
