/**
 * @module gateway/config/yaml-documents
 * The YAML documents of a config file, one at a time, within the bounds of
 * files/yaml-limits: a document with errors becomes a problem and is left
 * out, and a position in an annotation's text is told as one in its file.
 */
import { isScalar, type Document, type YAMLError } from 'yaml';
import { errorText, yamlDocuments, YamlLimitError } from '../../files';
import { configProblem, type ConfigProblem } from './problems';
import type { RecordSource } from './schema';

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

/** Most aliases a document may use: each stands for a whole copy of what it names (a "billion laughs" file). */
export const MAX_ALIAS_COUNT = 100;

/** A document of a YAML stream and its place in it (1-based), for messages. */
export interface ParsedDocument {
  value: unknown;
  index: number;
  node: Document.Parsed;
}

/**
 * Parses a YAML stream, a document at a time (each is handed on before the
 * next is read: a stream of thousands never holds thousands of trees);
 * documents with errors become problems and are left out, and a stream
 * past the bounds of files/yaml-limits ends at the problem of it.
 * `lineOffset` is where the text starts in its file, when it is part of
 * one (an annotation), so that positions name lines of the file. Merge
 * keys (`<<`) are read, as Kubernetes' and Emissary's own YAML readers read them.
 */
export function* parseDocuments(
  text: string,
  source: RecordSource,
  what: string,
  problems: ConfigProblem[],
  lineOffset?: LineOffset,
): Generator<ParsedDocument, void> {
  let index = 0;
  const docs = yamlDocuments(text, { prettyErrors: true, merge: true });
  for (;;) {
    let next: IteratorResult<Document.Parsed, void>;
    try {
      next = docs.next();
    } catch (err) {
      if (!(err instanceof YamlLimitError)) throw err;
      const said =
        err.limit === 'aliases'
          ? `${docsLabel(err.document)}${TOO_MANY_ALIASES}`
          : positionInFile(err.message, lineOffset);
      problems.push(configProblem({ source }, `${what}: ${said}`));
      return;
    }
    if (next.done) return;
    const doc = next.value;
    index++;
    if (doc.errors.length > 0) {
      for (const err of onePerLine(doc.errors))
        problems.push(configProblem({ source }, `${what}: ${positionInFile(firstLine(err.message), lineOffset)}`));
      continue;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      // Found only when the values are built: more aliases than allowed, an alias to an anchor not yet defined.
      problems.push(configProblem({ source }, `${what}: ${docsLabel(index)}${aliasText(err)}`));
      continue;
    }
    if (value !== null && value !== undefined) yield { value, index, node: doc };
  }
}

function docsLabel(index: number): string {
  return index > 1 ? `document ${index}: ` : '';
}

const TOO_MANY_ALIASES = `uses aliases more than ${MAX_ALIAS_COUNT} times: refused, as a file that expands without bound would be`;

/** What building a document's values threw, in words. */
function aliasText(err: unknown): string {
  const text = errorText(err);
  return /excessive alias count/i.test(text) ? TOO_MANY_ALIASES : text;
}

/** Where an annotation's text starts in its file: lines before it, and the indentation taken off each line. */
export interface LineOffset {
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
export function annotationOffset(
  doc: Document.Parsed,
  path: readonly (string | number)[],
  fileText: string,
): LineOffset | undefined {
  const node = doc.getIn(path, true);
  if (!isScalar(node) || (node.type !== 'BLOCK_LITERAL' && node.type !== 'BLOCK_FOLDED') || !node.range)
    return undefined;
  const start = node.range[0];
  // The header line (`|`) ends the line the scalar starts on; the content begins after it.
  const headerEnd = fileText.indexOf('\n', start);
  if (headerEnd === -1) return undefined;
  const lines = fileText.slice(0, headerEnd + 1).split('\n').length - 1;
  const firstContent = fileText.slice(headerEnd + 1).match(/^( *)\S/m);
  return { lines, indent: firstContent ? firstContent[1].length : 0 };
}
