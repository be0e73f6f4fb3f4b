/**
 * @module ratelimit/limits/yaml
 * Reads limits YAML as envoyproxy/ratelimit does: with Go's gopkg.in/yaml.v2
 * (v2.4), which resolves plain scalars by YAML 1.1 and then fills typed Go
 * fields. So the documents are parsed with the `yaml` package's YAML 1.1
 * schema (merge keys, `yes`/`no`/`on`/`off`/`y`/`n` booleans), and then each
 * field is given what yaml.v2 would put in it:
 *
 * - a string field (`domain`, `key`, `value`, `name`, `unit`) keeps its text
 *   as written: `value: 00123` is "00123", `value: on` is "on";
 * - `requests_per_unit` (a Go uint32) takes an integer as Go's strconv reads
 *   it (`0x1F`, `0X1F`, `0o17`, `017`, `0b101`, `1_000`, `+5`), an empty
 *   value or `~` as 0, and nothing else: a decimal number (`5.0`, `1e3`),
 *   base 60 (`1:30`) or a quoted string is refused, as that service refuses it;
 * - a key written twice in one mapping holds the last value, as yaml.v2
 *   (outside its strict mode) keeps it, with a warning;
 * - a merge key `<<` applies where it is written (see limits-yaml-tree).
 */
import {
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  Scalar,
  visit,
  type Document,
  type YAMLError,
  type YAMLMap,
} from 'yaml';
import { aliasResolver, goValue, type AliasResolver } from './yaml-tree';
import { DEFAULT_YAML_LIMITS, yamlDocuments, YamlLimitError, type YamlLimits } from '../../files';

/** The fields of the format that envoyproxy/ratelimit reads as strings. */
const STRING_FIELDS = new Set(['domain', 'key', 'value', 'name', 'unit']);

/** The field yaml.v2 reads into a Go uint32. */
const COUNT_FIELD = 'requests_per_unit';

/** An integer as Go's `strconv.ParseInt(s, 0, 64)` reads it, once yaml.v2 has removed every `_`. */
const GO_INTEGER = /^([-+]?)(?:0[xX]([0-9a-fA-F]+)|0[oO]([0-7]+)|0[bB]([01]+)|0([0-7]*)|([1-9][0-9]*))$/;

/**
 * The integer yaml.v2 resolves a plain scalar to, or undefined when it
 * resolves to something else (a float, a string). yaml.v2 only tries
 * numbers for text that starts with a digit or a sign.
 */
export function goInteger(text: string): number | undefined {
  if (!/^[-+0-9]/.test(text)) return undefined;
  const m = GO_INTEGER.exec(text.replace(/_/g, ''));
  if (!m) return undefined;
  const [, sign, hex, octal, binary, zeroOctal, decimal] = m;
  let n: number;
  if (hex !== undefined) n = Number.parseInt(hex, 16);
  else if (octal !== undefined) n = Number.parseInt(octal, 8);
  else if (binary !== undefined) n = Number.parseInt(binary, 2);
  else if (zeroOctal !== undefined) n = zeroOctal === '' ? 0 : Number.parseInt(zeroOctal, 8);
  else n = Number(decimal);
  return sign === '-' ? -n : n;
}

/** The value yaml.v2 gives a uint32 field from this scalar; a string (refused by the schema) when none. */
function countValue(node: Scalar): unknown {
  if (node.tag !== undefined) return node.value; // an explicit tag decides, in both readers
  if (node.type !== Scalar.PLAIN) return typeof node.value === 'string' ? node.value : node.source;
  if (node.value === null) return 0; // yaml.v2 gives a null the field's zero value
  return goInteger(node.source ?? '') ?? String(node.source);
}

/**
 * Gives the string and count fields what yaml.v2 would put in them. Runs on
 * the document before its values are built, so an anchored mapping is fixed
 * where it is written and every merge of it copies the result.
 */
function readFieldsAsGo(doc: Document, resolve: AliasResolver): void {
  visit(doc, {
    Pair(_, pair) {
      if (!isScalar(pair.key)) return;
      const field = pair.key.value;
      const isString = typeof field === 'string' && STRING_FIELDS.has(field);
      if (!isString && field !== COUNT_FIELD) return;
      const node = isAlias(pair.value) ? resolve(pair.value) : pair.value;
      if (!isScalar(node) || node.source === undefined) return;
      let value: unknown;
      if (isString) {
        // A null stays null: the schema reads it as "", Go's zero value.
        if (node.value === null || typeof node.value === 'string') return;
        value = node.source;
      } else {
        value = countValue(node);
        if (value === node.value) return;
      }
      // An alias may point at a node another field reads otherwise: give this field its own copy.
      if (node === pair.value) node.value = value;
      else pair.value = new Scalar(value);
    },
  });
}

/** `descriptors[0].rate_limit`: where a node sits, from the ancestors `visit` gives. */
function pathOf(ancestors: readonly unknown[], node: unknown): string {
  let out = '';
  for (let i = 0; i < ancestors.length; i++) {
    const at = ancestors[i];
    const child = i + 1 < ancestors.length ? ancestors[i + 1] : node;
    if (isPair(at) && isScalar(at.key)) {
      const key = typeof at.key.value === 'symbol' ? '<<' : String(at.key.value);
      out += out === '' ? key : `.${key}`;
    } else if (isSeq(at)) out += `[${at.items.indexOf(child)}]`;
  }
  return out;
}

/**
 * A key written twice in one mapping: yaml.v2 (without its strict mode, as
 * envoyproxy/ratelimit reads) keeps the last one, and so does the `yaml`
 * package when told not to refuse it. Each is said once, with the line of
 * the one kept.
 */
function duplicateKeys(doc: Document, lines: LineCounter): string[] {
  const found: string[] = [];
  visit(doc, {
    Map(_, map, ancestors) {
      // Per key: where its last spelling starts, and whether there were more.
      const last = new Map<string, { offset: number; repeated: boolean }>();
      for (const item of map.items) {
        // A merge key may repeat: yaml.v2 applies each where it stands.
        if (!isScalar(item.key) || typeof item.key.value === 'symbol') continue;
        const name = String(item.key.value);
        last.set(name, { offset: item.key.range?.[0] ?? 0, repeated: last.has(name) });
      }
      // Found only where a key repeats: the path costs a search of each list above.
      let where: string | undefined;
      for (const [name, { offset, repeated }] of last) {
        if (!repeated) continue;
        where ??= pathOf(ancestors, map);
        const at = where === '' ? name : `${where}.${name}`;
        const line = lines.linePos(offset).line;
        found.push(
          name === 'rate_limit'
            ? `${at}: written twice in one mapping; the fields of the last one (line ${line}) fill those of the first, as envoyproxy/ratelimit reads it`
            : `${at}: written twice in one mapping; the last one (line ${line}) is used, as envoyproxy/ratelimit uses it`,
        );
      }
    },
  });
  return found;
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

/** The first line of a `yaml` error, without the colon that led to the excerpt after it. */
function firstLine(err: Error): string {
  return err.message.split('\n')[0].replace(/:$/, '');
}

/** Problems of one file's YAML, each prefixed with its document when the file holds several. */
export class YamlProblems extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'YamlProblems';
  }
}

/** A path of fields and indexes in a document: `['descriptors', 0, 'rate_limit']`. */
export type FieldPath = readonly (string | number)[];

/** One document of a limits file: its plain value, and where its fields are written. */
export interface ParsedDocument {
  value: unknown;
  /**
   * The line of the file where `path` is written: its key, or the item of a
   * list. A field that is not written there (missing, or given by a merge)
   * is placed where the nearest thing on its path is written.
   */
  readonly lineOf: (path: FieldPath) => number | undefined;
}

function startOf(node: unknown): number | undefined {
  return (node as { range?: [number, number, number] } | null)?.range?.[0];
}

/** The value of `key` in a mapping and where its key is written, merges included (at the `<<`). */
function fieldOf(
  resolve: AliasResolver,
  map: YAMLMap,
  key: string,
): { at: number | undefined; value: unknown } | undefined {
  let found: { at: number | undefined; value: unknown } | undefined;
  // Of a key written twice, the last one is used.
  for (const pair of map.items)
    if (isScalar(pair.key) && String(pair.key.value) === key) found = { at: startOf(pair.key), value: pair.value };
  if (found) return found;
  for (const pair of map.items) {
    if (!isScalar(pair.key) || typeof pair.key.value !== 'symbol') continue;
    const merged = isAlias(pair.value) ? resolve(pair.value) : pair.value;
    const sources = isSeq(merged) ? merged.items : [merged];
    for (const source of sources) {
      const from = isAlias(source) ? resolve(source) : source;
      const inner = isMap(from) ? fieldOf(resolve, from, key) : undefined;
      if (inner) return { at: startOf(pair.key), value: inner.value };
    }
  }
  return undefined;
}

function lineOf(doc: Document, resolve: AliasResolver, lines: LineCounter, path: FieldPath): number | undefined {
  let node: unknown = doc.contents;
  let at = startOf(node);
  for (const step of path) {
    if (isAlias(node)) node = resolve(node);
    if (isMap(node)) {
      const field = fieldOf(resolve, node, String(step));
      if (!field) break;
      at = field.at ?? at;
      node = field.value;
    } else if (isSeq(node) && typeof step === 'number' && step < node.items.length) {
      node = node.items[step];
      at = startOf(node) ?? at;
    } else {
      break;
    }
  }
  return at === undefined ? undefined : lines.linePos(at).line;
}

/**
 * What a limits file may hold (see files/yaml-limits): a domain a document,
 * and aliases as many as its tokens, since each is counted once expanded
 * (see ./yaml-tree).
 */
const LIMITS_YAML: YamlLimits = { ...DEFAULT_YAML_LIMITS, documents: 4096, aliases: Infinity };

/**
 * Parses every document of a limits file into plain values, as
 * envoyproxy/ratelimit would read them, a document at a time, within the
 * bounds of {@link LIMITS_YAML}. Empty documents (a trailing `---`, a
 * file of comments) are left out. Throws {@link YamlProblems}. What loads
 * but deserves a look (a key written twice) is added to `warnings`.
 */
export function parseLimitsYaml(text: string, warnings: string[] = []): ParsedDocument[] {
  const lines = new LineCounter();
  const docs = yamlDocuments(text, {
    schema: 'yaml-1.1',
    merge: true,
    keepDuplicateKeys: true,
    lineCounter: lines,
    limits: LIMITS_YAML,
  });
  // Each with its document (from 1), or 0 for the stream's: which document is said once the stream is known to hold several.
  const problems: [number, string][] = [];
  const found: [number, string][] = [];
  const parsed: ParsedDocument[] = [];
  let count = 0;
  try {
    for (const doc of docs) readDocument(doc, ++count);
  } catch (err) {
    if (!(err instanceof YamlLimitError)) throw err;
    problems.push([0, err.message]);
  }
  const said = ([index, text]: [number, string]) => (count > 1 && index > 0 ? `(document ${index}) ${text}` : text);
  warnings.push(...found.map(said));
  if (problems.length) throw new YamlProblems(problems.map(said));
  return parsed;

  function readDocument(doc: Document.Parsed, index: number): void {
    for (const err of onePerLine(doc.errors)) problems.push([index, firstLine(err)]);
    if (doc.errors.length) return;
    for (const w of duplicateKeys(doc, lines)) found.push([index, w]);
    let value: unknown;
    const resolve = aliasResolver(doc);
    try {
      readFieldsAsGo(doc, resolve);
      value = goValue(doc, resolve);
    } catch (err) {
      // A merge of something that is not a mapping, an anchor holding itself: found only when building.
      problems.push([index, firstLine(err as Error)]);
      return;
    }
    if (value !== null && value !== undefined)
      parsed.push({ value, lineOf: (path) => lineOf(doc, resolve, lines, path) });
  }
}
