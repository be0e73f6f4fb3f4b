/**
 * @module files/yaml-limits
 * The bounds a YAML stream is held to while it is read, checked token by
 * token as the `yaml` package's lexer and parser go, so that a hostile
 * file is refused at the first token past a bound, before its tree is
 * built. The package builds every document whole before anything can look
 * at it, and its tree takes hundreds of bytes a token: a file of deep
 * nesting or of millions of tokens, well under the file size limit, would
 * take gigabytes before anything refused it. Past its first tokens, the
 * rest of a document is counted ahead by a lexer alone, so that one of
 * millions of tokens is refused before the parser has built most of it.
 */
import { LineCounter, Lexer, Parser, type CST } from 'yaml';

/** What one YAML stream may hold. */
export interface YamlLimits {
  /** Deepest nesting of mappings and lists. */
  readonly depth: number;
  /** Most tokens (values, keys, indicators, spaces, line breaks, comments) of one document. */
  readonly documentTokens: number;
  /** Most documents in the stream, empty ones too. */
  readonly documents: number;
  /** Most aliases (`*name`) in one document. */
  readonly aliases: number;
  /** Longest scalar, as written, in characters. */
  readonly scalarLength: number;
}

/**
 * The bounds by default: deeper than any configuration nests; as many
 * tokens a document as 30 000 rate limits in one domain take (a tree of
 * some hundreds of MB at the most); as many documents as 60 000 Mappings
 * (an 8 MiB file) take; Emissary's 100 aliases; a scalar four times what
 * Kubernetes lets all the annotations of an object hold.
 */
export const DEFAULT_YAML_LIMITS: YamlLimits = Object.freeze({
  depth: 64,
  documentTokens: 1 << 20,
  documents: 1 << 16,
  aliases: 100,
  scalarLength: 1 << 20,
});

/** A stream that crosses one of its {@link YamlLimits}. */
export class YamlLimitError extends Error {
  constructor(
    /** The bound crossed. */
    readonly limit: keyof YamlLimits,
    /** What was crossed, in words. */
    readonly reason: string,
    /** The document it was crossed in (from 1), and the line and column (from 1) of the token that crossed it. */
    readonly document: number,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${reason} at line ${line}, column ${column}: refused`);
    this.name = 'YamlLimitError';
  }
}

/** The lexer's mark before a plain or block scalar: the token after it is the scalar's text, whatever it starts with. */
const SCALAR_MARK = '\x1f';

/** The lexer's marks that take no place in the text: a document's start, a flow collection's forced end, a scalar's. */
const PLACELESS = new Set(['\x02', '\x18', SCALAR_MARK]);

/**
 * How many tokens of a document are read into the tree before the rest of
 * it is counted ahead: every nesting and alias in files seen so far is met
 * within it, and what it builds takes some tens of MB at the most.
 */
export const LOOK_AHEAD_AFTER = 1 << 16;

/** Where the lexer of a look-ahead stands: how many lexical tokens it has read, and where in the text. */
interface Ahead {
  readonly lexemes: Iterator<string>;
  read: number;
  offset: number;
}

/** The line and column (from 1) of `offset` in `text`, counted in the text itself. */
function placeOf(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let lineStart = 0;
  for (let nl = text.indexOf('\n'); nl !== -1 && nl < offset; nl = text.indexOf('\n', nl + 1)) {
    line++;
    lineStart = nl + 1;
  }
  return { line, col: offset - lineStart + 1 };
}

/**
 * Counts the rest of a document ahead of the parser, with a lexer of its
 * own, and throws the refusal the parser would reach at a token, alias or
 * value bound: the `yaml` parser takes some microseconds and hundreds of
 * bytes a token, its lexer a fraction of that, so a document of millions
 * of tokens is refused in the time it takes to lex its first million.
 * Nesting is the parser's to see: a document past the token bound is
 * refused for that, even when it would nest too deeply further on. Ends,
 * refusing nothing, at anything that may start another document.
 */
function countAhead(
  text: string,
  limits: YamlLimits,
  ahead: Ahead,
  /** The lexical tokens read so far (the one just read among them), and the document's counts with it. */
  at: { read: number; tokens: number; aliases: number; scalarNext: boolean; document: number },
): void {
  const refuse = (limit: keyof YamlLimits, reason: string): never => {
    const { line, col } = placeOf(text, ahead.offset);
    throw new YamlLimitError(limit, reason, at.document, line, col);
  };
  const advance = (): string | undefined => {
    const next = ahead.lexemes.next();
    if (next.done) return undefined;
    ahead.read++;
    return next.value;
  };
  // Past this point already: its count would not be this document's; the parser's own counts still hold.
  if (ahead.read > at.read) return;
  while (ahead.read < at.read) {
    const lexeme = advance();
    if (lexeme === undefined) return;
    if (!PLACELESS.has(lexeme)) ahead.offset += lexeme.length;
  }
  let { tokens, aliases, scalarNext } = at;
  for (let lexeme = advance(); lexeme !== undefined; lexeme = advance()) {
    const first = lexeme.charCodeAt(0);
    if (!scalarNext && (lexeme === '---' || lexeme === '...' || first === 0x25)) return;
    if (++tokens > limits.documentTokens)
      refuse(
        'documentTokens',
        `a document holds more than ${limits.documentTokens} tokens: split it into documents or files`,
      );
    if (scalarNext || first === 0x22 || first === 0x27) {
      if (lexeme.length > limits.scalarLength)
        refuse('scalarLength', `a value is ${lexeme.length} characters long, more than ${limits.scalarLength}`);
    } else if (first === 0x2a && ++aliases > limits.aliases) {
      refuse('aliases', `uses aliases more than ${limits.aliases} times in one document`);
    }
    scalarNext = lexeme === SCALAR_MARK;
    if (!PLACELESS.has(lexeme)) ahead.offset += lexeme.length;
  }
}

/**
 * The tokens the `yaml` parser makes of `text` (what its `Composer`
 * composes documents from), one document at a time. Throws
 * {@link YamlLimitError} at the first lexical token past a bound of
 * `limits`; `lines` learns the line breaks read.
 */
export function* boundedTokens(
  text: string,
  limits: YamlLimits = DEFAULT_YAML_LIMITS,
  lines: LineCounter = new LineCounter(),
): Generator<CST.Token, void> {
  const parser = new Parser(lines.addNewLine);
  // As the parser's own parse() does before its first token: the first line starts the text.
  lines.addNewLine(0);
  // The document, and the node inside it, are on the parser's stack below the collections.
  const maxStack = limits.depth + 2;
  // Where the lexical token read starts: before it reaches the parser, its offset.
  let offset = 0;
  let tokens = 0;
  let aliases = 0;
  let documents = 0;
  let scalarNext = false;
  let read = 0;
  let ahead: Ahead | undefined;
  const refuse = (limit: keyof YamlLimits, reason: string): never => {
    const at = lines.linePos(offset);
    throw new YamlLimitError(limit, reason, documents + 1, at.line, at.col);
  };
  for (const lexeme of new Lexer().lex(text)) {
    offset = parser.offset;
    const first = lexeme.charCodeAt(0);
    if (++tokens > limits.documentTokens)
      refuse(
        'documentTokens',
        `a document holds more than ${limits.documentTokens} tokens: split it into documents or files`,
      );
    if (scalarNext || first === 0x22 || first === 0x27) {
      if (lexeme.length > limits.scalarLength)
        refuse('scalarLength', `a value is ${lexeme.length} characters long, more than ${limits.scalarLength}`);
    } else if (first === 0x2a && ++aliases > limits.aliases) {
      refuse('aliases', `uses aliases more than ${limits.aliases} times in one document`);
    }
    scalarNext = lexeme === SCALAR_MARK;
    read++;
    if (tokens === LOOK_AHEAD_AFTER && limits.documentTokens > LOOK_AHEAD_AFTER) {
      ahead ??= { lexemes: new Lexer().lex(text)[Symbol.iterator](), read: 0, offset: 0 };
      countAhead(text, limits, ahead, { read, tokens, aliases, scalarNext, document: documents + 1 });
    }
    for (const token of parser.next(lexeme)) {
      if (token.type === 'document') {
        if (++documents > limits.documents) refuse('documents', `holds more than ${limits.documents} documents`);
        tokens = 0;
        aliases = 0;
      }
      yield token;
    }
    if (parser.stack.length > maxStack)
      refuse('depth', `nested too deeply to be read (more than ${limits.depth} mappings or lists inside each other)`);
  }
  for (const token of parser.end()) {
    if (token.type === 'document' && ++documents > limits.documents)
      refuse('documents', `holds more than ${limits.documents} documents`);
    yield token;
  }
}
