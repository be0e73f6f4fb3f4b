/**
 * @module gateway/match/regex
 * The regular expressions of Mappings, as Envoy runs them: RE2's syntax and
 * semantics (re2js, pure JavaScript), a whole-text match where Envoy's
 * matchers want one, and a bound on each compiled program, as Envoy's
 * `max_program_size` (Emissary sets 200, its Module's `regex_max_size`).
 *
 * Matching a request never holds the event loop long, whatever the
 * configuration: a pattern is matched by an automaton built whole when the
 * configuration loads (./automaton), one table lookup a character, and
 * every character read for one routing decision is charged to a
 * {@link MatchMeter} that refuses the request past its budget (414 for the
 * path and query, 431 for a header). re2js is required when a first
 * pattern is checked: a config without one never holds its tables.
 */
import type { RE2JS } from 're2js';
import type { Steps } from '../slices';
import { buildAutomaton, DEFAULT_AUTOMATON_LIMITS, type Automaton, type AutomatonLimits } from './automaton';
import type { MatchedPart, MatchMeter } from './meter';
import { classCost, leastInstructions } from './program-size';

export type { RE2JS } from 're2js';
export { createMatchMeter, DEFAULT_MATCH_BUDGET, UNMETERED, type MatchedPart, type MatchMeter } from './meter';

type Re2js = typeof import('re2js');

let loaded: Re2js | undefined;

function re2js(): Re2js {
  return (loaded ??= require('re2js') as Re2js);
}

/** Emissary's `regex_max_size`, and so Envoy's `max_program_size` behind it, when a Module does not say. */
export const DEFAULT_REGEX_MAX_SIZE = 200;

/**
 * The largest `regex_max_size` a Module may set: re2js compiles a program
 * on the event loop, during a reload, in time that grows with its size.
 */
export const MAX_REGEX_MAX_SIZE = 20_000;

/** The longest pattern read: re2js's compiling a longer one could hold the event loop. */
export const MAX_PATTERN_LENGTH = 4096;

/** The most Unicode classes (`\pL`) a pattern may hold: re2js builds each from Unicode's tables as it compiles. */
export const MAX_UNICODE_CLASSES = 64;

/** The most characters of a pattern's classes matched in any case: re2js folds each one's case as it compiles. */
export const MAX_FOLDED_CHARACTERS = 1 << 18;

/** A pattern ready to be held against requests: whole-text matching by its automaton. */
export class Pattern {
  constructor(
    /** The pattern as written. */
    readonly source: string,
    private readonly automaton: Automaton,
  ) {}

  /** Whether the pattern matches the whole of `text`; the characters read are charged to `meter`. */
  testExact(text: string, meter: MatchMeter, part: MatchedPart): boolean {
    const read = this.automaton.read(text);
    meter.charge(read >>> 1, part);
    return (read & 1) === 1;
  }

  /** The memory its automaton takes, in bytes. */
  get bytes(): number {
    return this.automaton.bytes;
  }
}

/** The longest part of a pattern a problem quotes. */
const QUOTED_LENGTH = 80;

/** `pattern` quoted in a problem: its first {@link QUOTED_LENGTH} characters, and `…` when there are more. */
export function quoted(pattern: string): string {
  return pattern.length > QUOTED_LENGTH ? `'${pattern.slice(0, QUOTED_LENGTH)}…'` : `'${pattern}'`;
}

/** Why `pattern` is no RE2 expression, or undefined when it is one. */
export function regexSyntaxProblem(pattern: string): string | undefined {
  const re = compileProgram(pattern);
  return typeof re === 'string' ? re : undefined;
}

function syntaxMessage(pattern: string, err: unknown): string {
  if (!(err instanceof re2js().RE2JSSyntaxException))
    return `${quoted(pattern)} cannot be compiled: ${(err as Error).message}`;
  const lookaround = /^\(\?<?[=!]/.test(err.getPattern() ?? '');
  return `${quoted(pattern)} is no RE2 expression (${err.getDescription()}${err.getPattern() ? `: ${err.getPattern()}` : ''})${
    lookaround ? '; RE2, as Envoy uses it, has no lookahead or lookbehind' : ''
  }`;
}

/** `pattern` compiled by re2js, or why it cannot be (one no Module's `regex_max_size` would take is not compiled). */
function compileProgram(pattern: string): RE2JS | string {
  if (pattern.length > MAX_PATTERN_LENGTH)
    return `${quoted(pattern)} is ${pattern.length} characters long, over the limit of ${MAX_PATTERN_LENGTH}: split it among Mappings`;
  const least = leastInstructions(pattern);
  if (least > MAX_REGEX_MAX_SIZE)
    return `${quoted(pattern)} compiles to a program of at least ${least} instructions, over the ${MAX_REGEX_MAX_SIZE} that config.regex_max_size may allow: simplify it`;
  const cost = classCost(pattern);
  if (cost.unicodeClasses > MAX_UNICODE_CLASSES)
    return `${quoted(pattern)} holds ${cost.unicodeClasses} Unicode classes (\\pL, \\p{Greek}), over the limit of ${MAX_UNICODE_CLASSES}: each is built from Unicode's tables when the pattern is compiled, on the event loop`;
  if (cost.foldedCharacters > MAX_FOLDED_CHARACTERS)
    return `${quoted(pattern)} matches ${cost.foldedCharacters} characters of its classes in any case, over the limit of ${MAX_FOLDED_CHARACTERS}: each one's case is folded when the pattern is compiled, on the event loop; narrow the ranges under (?i)`;
  try {
    return re2js().RE2JS.compile(pattern);
  } catch (err) {
    return syntaxMessage(pattern, err);
  }
}

/**
 * Compiles `pattern` for RE2's program to run (as `regex_rewrite` needs,
 * for its groups), or says why it cannot be served: no RE2 expression, or
 * a program larger than `maxSize` instructions.
 */
export function compileRegex(pattern: string, maxSize: number): RE2JS | string {
  const least = leastInstructions(pattern);
  // Below some thousands of instructions compiling is quick, and tells the exact size.
  if (least > Math.max(maxSize, 4096))
    return `${quoted(pattern)} compiles to a program of at least ${least} instructions, over the limit of ${maxSize} (the Module's config.regex_max_size): simplify it or raise the limit`;
  const re = compileProgram(pattern);
  if (typeof re === 'string') return re;
  const size = re.programSize();
  if (size > maxSize) {
    return `${quoted(pattern)} compiles to a program of ${size} instructions, over the limit of ${maxSize} (the Module's config.regex_max_size): simplify it or raise the limit`;
  }
  return re;
}

/** What a configuration's patterns may cost together. */
export interface PatternLimits {
  /** The largest program a pattern may compile to, in RE2 instructions: the Module's `regex_max_size`. */
  readonly maxSize?: number;
  /** What one pattern's automaton may cost. */
  readonly automaton?: AutomatonLimits;
  /** The memory all the automata of a configuration may take together, in bytes. Default 64 MiB. */
  readonly totalBytes?: number;
}

/** The memory all the automata of a configuration may take together by default. */
export const DEFAULT_AUTOMATA_BYTES = 64 * 1024 * 1024;

/** Compiles the patterns of one configuration, each text once, and holds them to its limits. */
export interface PatternCompiler {
  readonly maxSize: number;
  /** The pattern, or why it cannot be served; a step every millisecond or so of building (see ../slices). */
  compile(pattern: string): Steps<Pattern | string>;
}

/** A compiler of patterns under `limits`. */
export function createPatternCompiler(limits: PatternLimits = {}): PatternCompiler {
  const maxSize = limits.maxSize ?? DEFAULT_REGEX_MAX_SIZE;
  const automatonLimits = limits.automaton ?? DEFAULT_AUTOMATON_LIMITS;
  const totalBytes = limits.totalBytes ?? DEFAULT_AUTOMATA_BYTES;
  const compiled = new Map<string, Pattern | string>();
  let bytes = 0;
  return {
    maxSize,
    *compile(pattern) {
      const known = compiled.get(pattern);
      if (known !== undefined) return known;
      const re = compileRegex(pattern, maxSize);
      let outcome: Pattern | string;
      if (typeof re === 'string') outcome = re;
      else {
        const automaton = yield* buildAutomaton(re, automatonLimits);
        if (typeof automaton === 'string') outcome = `${quoted(pattern)} ${automaton}`;
        else if (bytes + automaton.bytes > totalBytes)
          outcome = `${quoted(pattern)} would take the automata of the configuration's patterns past ${totalBytes / 1024 / 1024} MiB: use fewer or simpler patterns`;
        else {
          bytes += automaton.bytes;
          outcome = new Pattern(pattern, automaton);
        }
      }
      compiled.set(pattern, outcome);
      return outcome;
    },
  };
}

/** Whether a pattern matches in any case as a whole: it starts with RE2's `(?i)` flag. */
export function foldsCase(pattern: string): boolean {
  return /^\(\?[a-zA-Z]*i[a-zA-Z]*\)/.test(pattern);
}
