/**
 * @module files/yaml
 * YAML streams read a document at a time, within bounds, in time that
 * grows with their size, not its square.
 *
 * Each document is composed and handed on before the next is read, so that
 * a stream of 60 000 documents never holds 60 000 trees, and the tokens are
 * held to ./yaml-limits as they come. The `yaml` package finds a key
 * written twice in a mapping by comparing it with every key before it: a
 * mapping of 20 000 keys takes it seconds, one of 200 000 minutes. So the
 * parse leaves that check out, and a set of each mapping's keys does it,
 * with the error the package would give.
 */
import {
  Composer,
  isScalar,
  LineCounter,
  visit,
  YAMLParseError,
  type Document,
  type DocumentOptions,
  type ParseOptions,
  type SchemaOptions,
  type YAMLError,
} from 'yaml';
import { boundedTokens, DEFAULT_YAML_LIMITS, type YamlLimits } from './yaml-limits';

/** The options of `parseAllDocuments`, but for the key check, which is this module's, and the bounds of the stream. */
export type YamlStreamOptions = Omit<ParseOptions & DocumentOptions & SchemaOptions, 'uniqueKeys'> & {
  /** Leaves a key written twice in a mapping as it is, with no error (for readers that keep the last value). */
  readonly keepDuplicateKeys?: boolean;
  /** Default {@link DEFAULT_YAML_LIMITS}. */
  readonly limits?: YamlLimits;
};

const STACK_EXHAUSTED = /^Maximum call stack size exceeded/;
const TOO_DEEP = 'nested too deeply to be read (mappings or lists inside thousands of others)';

/**
 * Says of a document nested deeper than the parser's stack that it is so:
 * the package reports it in the words of the stack it ran out of, which say
 * nothing of the file.
 */
export function rewordDepthErrors(doc: Document): void {
  for (const error of doc.errors)
    if (error.code === 'RESOURCE_EXHAUSTION') error.message = error.message.replace(STACK_EXHAUSTED, TOO_DEEP);
}

/**
 * Each mapping's keys written twice, as the `yaml` package reports them
 * (`Map keys must be unique at line 3, column 1`): scalar keys of equal
 * value; a merge key (`<<`) may repeat.
 */
function duplicateKeyErrors(doc: Document, text: string, lines: LineCounter, pretty: boolean): YAMLParseError[] {
  const errors: YAMLParseError[] = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        if (!isScalar(key) || typeof key.value === 'symbol') continue;
        if (!seen.has(key.value)) {
          seen.add(key.value);
          continue;
        }
        const offset = key.range?.[0] ?? 0;
        const error = new YAMLParseError([offset, offset + 1], 'DUPLICATE_KEY', 'Map keys must be unique');
        if (pretty) {
          // As the package's prettyErrors words it: the position, then the line with a caret under the key.
          const at = lines.linePos(offset);
          const line = text
            .slice(lines.lineStarts[at.line - 1], lines.lineStarts[at.line] ?? text.length)
            .replace(/[\n\r]+$/, '');
          error.linePos = [at];
          error.message += ` at line ${at.line}, column ${at.col}:\n\n${line.slice(0, 80)}\n${' '.repeat(Math.min(at.col - 1, 79))}^\n`;
        }
        errors.push(error);
      }
    },
  });
  // In the order the package finds them: as the keys come in the text.
  return errors.sort((a, b) => a.pos[0] - b.pos[0]);
}

/**
 * Adds the position and the line of an error to its message, as the
 * package's `prettyErrors` does: `at line 3, column 1:`, then the line
 * with a caret under the place.
 */
function prettify(error: YAMLError, text: string, lines: LineCounter): void {
  if (error.pos[0] === -1) return;
  error.linePos = [lines.linePos(error.pos[0]), lines.linePos(error.pos[1])];
  const { line, col } = error.linePos[0];
  error.message += ` at line ${line}, column ${col}`;
  let at = col - 1;
  let lineText = text.substring(lines.lineStarts[line - 1], lines.lineStarts[line]).replace(/[\n\r]+$/, '');
  // At most 80 characters, the place near their middle.
  if (at >= 60 && lineText.length > 80) {
    const trimStart = Math.min(at - 39, lineText.length - 79);
    lineText = '…' + lineText.substring(trimStart);
    at -= trimStart - 1;
  }
  if (lineText.length > 80) lineText = lineText.substring(0, 79) + '…';
  // The line before too, when the place is at the start of its own.
  if (line > 1 && /^ *$/.test(lineText.substring(0, at))) {
    let previous = text.substring(lines.lineStarts[line - 2], lines.lineStarts[line - 1]);
    if (previous.length > 80) previous = previous.substring(0, 79) + '…\n';
    lineText = previous + lineText;
  }
  if (/[^ ]/.test(lineText)) {
    const end = error.linePos[1];
    const count = end?.line === line && end.col > col ? Math.max(1, Math.min(end.col - col, 80 - at)) : 1;
    error.message += `:\n\n${lineText}\n${' '.repeat(at)}${'^'.repeat(count)}\n`;
  }
}

/**
 * The documents of `text`, one at a time, as `parseAllDocuments` gives
 * them with its default `uniqueKeys`: a document with a key written twice
 * in one mapping has that error (after any other it has), in time linear
 * in the text. Throws `YamlLimitError` (./yaml-limits) at the first token
 * past a bound, after the documents before it.
 */
export function* yamlDocuments(text: string, options: YamlStreamOptions = {}): Generator<Document.Parsed, void> {
  const { limits = DEFAULT_YAML_LIMITS, keepDuplicateKeys = false, lineCounter, ...parseOptions } = options;
  const lines = lineCounter ?? new LineCounter();
  const pretty = parseOptions.prettyErrors !== false;
  const composer = new Composer({ ...parseOptions, uniqueKeys: false });
  for (const doc of composer.compose(boundedTokens(text, limits, lines))) {
    rewordDepthErrors(doc);
    if (pretty) {
      for (const error of doc.errors) prettify(error, text, lines);
      for (const warning of doc.warnings) prettify(warning, text, lines);
    }
    if (!keepDuplicateKeys) doc.errors.push(...duplicateKeyErrors(doc, text, lines, pretty));
    yield doc;
  }
}

/** {@link yamlDocuments}, all of them at once. */
export function parseYamlStream(text: string, options: YamlStreamOptions = {}): Document.Parsed[] {
  return [...yamlDocuments(text, options)];
}
