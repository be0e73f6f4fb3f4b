/**
 * @module files/yaml
 * YAML streams parsed in time that grows with their size, not its square.
 * The `yaml` package finds a key written twice in a mapping by comparing it
 * with every key before it: a mapping of 20 000 keys takes it seconds, one
 * of 200 000 (a 3 MB file, well under the file size limit) minutes, on the
 * thread that checks the folder and holds every reload behind it. So the
 * parse leaves that check out, and a set of each mapping's keys does it,
 * with the error the package would give.
 */
import {
  isScalar,
  LineCounter,
  parseAllDocuments,
  visit,
  YAMLParseError,
  type Document,
  type DocumentOptions,
  type ParseOptions,
  type SchemaOptions,
} from 'yaml';

/** The options of `parseAllDocuments`, but for the key check and the line counter, which are this module's. */
export type YamlStreamOptions = Omit<ParseOptions & DocumentOptions & SchemaOptions, 'uniqueKeys' | 'lineCounter'>;

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
 * The documents of `text`, as `parseAllDocuments` gives them with its
 * default `uniqueKeys`: a document with a key written twice in one mapping
 * has that error (after any other it has), in time linear in the text.
 */
export function parseYamlStream(text: string, options: YamlStreamOptions = {}): Document.Parsed[] {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { ...options, uniqueKeys: false, lineCounter: lines });
  for (const doc of docs) {
    rewordDepthErrors(doc);
    doc.errors.push(...duplicateKeyErrors(doc, text, lines, options.prettyErrors !== false));
  }
  return [...docs];
}
