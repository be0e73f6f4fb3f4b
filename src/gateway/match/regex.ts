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
import { HttpError } from '../../http';
import type { Steps } from '../slices';
import { buildAutomaton, DEFAULT_AUTOMATON_LIMITS, type Automaton, type AutomatonLimits } from './automaton';

export type { RE2JS } from 're2js';

type Re2js = typeof import('re2js');

let loaded: Re2js | undefined;

function re2js(): Re2js {
  return (loaded ??= require('re2js') as Re2js);
}

/** Emissary's `regex_max_size`, and so Envoy's `max_program_size` behind it, when a Module does not say. */
export const DEFAULT_REGEX_MAX_SIZE = 200;

/**
 * How much one routing decision may read by pattern: characters read by
 * automata, plus, for `regex_rewrite` and `regex_redirect` (which RE2's
 * program runs, to find groups), the program's size for each character.
 * About 5 ms of the event loop at the most.
 */
export const DEFAULT_MATCH_BUDGET = 1 << 20;

/** The longest pattern read: re2js's compiling a longer one could hold the event loop. */
export const MAX_PATTERN_LENGTH = 4096;

/** What a pattern is held against: the path and query (414 past the budget), or a header, the host or the method (431). */
export type MatchedPart = 'url' | 'header';

/**
 * The work of one routing decision by pattern, counted: it throws the
 * request's refusal once the budget is spent.
 */
export interface MatchMeter {
  /** Starts counting for another decision. */
  restart(): void;
  /** Counts `units` of work reading `part`; throws a 414 or 431 once the budget is spent. */
  charge(units: number, part: MatchedPart): void;
}

/** A meter that counts nothing: for what the configuration, not a request, is matched against. */
export const UNMETERED: MatchMeter = Object.freeze({ restart() {}, charge() {} });

/** A meter of `budget` units a decision. */
export function createMatchMeter(budget: number = DEFAULT_MATCH_BUDGET): MatchMeter {
  let spent = 0;
  return {
    restart() {
      spent = 0;
    },
    charge(units, part) {
      spent += units;
      if (spent <= budget) return;
      throw HttpError.of(part === 'url' ? 'ROUTE_PATTERNS_URL_TOO_LONG' : 'ROUTE_PATTERNS_HEADER_TOO_LONG', {
        budget,
      });
    },
  };
}

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

/** Why `pattern` is no RE2 expression, or undefined when it is one. */
export function regexSyntaxProblem(pattern: string): string | undefined {
  const re = compileProgram(pattern);
  return typeof re === 'string' ? re : undefined;
}

function syntaxMessage(pattern: string, err: unknown): string {
  if (!(err instanceof re2js().RE2JSSyntaxException))
    return `'${pattern}' cannot be compiled: ${(err as Error).message}`;
  const lookaround = /^\(\?<?[=!]/.test(err.getPattern() ?? '');
  return `'${pattern}' is no RE2 expression (${err.getDescription()}${err.getPattern() ? `: ${err.getPattern()}` : ''})${
    lookaround ? '; RE2, as Envoy uses it, has no lookahead or lookbehind' : ''
  }`;
}

/** `pattern` compiled by re2js, or why it cannot be. */
function compileProgram(pattern: string): RE2JS | string {
  if (pattern.length > MAX_PATTERN_LENGTH)
    return `'${pattern.slice(0, 40)}...' is ${pattern.length} characters long, over the limit of ${MAX_PATTERN_LENGTH}: split it among Mappings`;
  try {
    return re2js().RE2JS.compile(pattern);
  } catch (err) {
    return syntaxMessage(pattern, err);
  }
}

/** Where the escape at `i` ends: `\\n`, `\\pL`, `\\p{Greek}`, `\\x41`, `\\x{1F600}`, `\\012`. */
function escapeEnd(pattern: string, i: number): number {
  const kind = pattern[i + 1];
  if (kind === 'p' || kind === 'P' || kind === 'x') {
    if (pattern[i + 2] === '{') {
      const end = pattern.indexOf('}', i + 3);
      return end === -1 ? pattern.length : end;
    }
    return Math.min(pattern.length, i + (kind === 'x' ? 3 : 2));
  }
  let end = i + 1;
  if (kind >= '0' && kind <= '7') while (end < i + 3 && pattern[end + 1] >= '0' && pattern[end + 1] <= '7') end++;
  return end;
}

/**
 * The fewest instructions `pattern` can compile to, read without compiling
 * it: each character, class or escape one, the longest alternative of a
 * choice, and each copy a counted repetition (`x{3}`, `x{2,9}`, `x{4,}`)
 * makes of what it repeats. re2js would otherwise take seconds to compile
 * a few thousand copies (`[a-z]{1000}` 300 times) before their number
 * could be refused.
 */
export function leastInstructions(pattern: string): number {
  // Per open group: the instructions of its alternative so far, and of its longest finished one.
  const groups: { sum: number; longest: number }[] = [{ sum: 0, longest: 0 }];
  let group = groups[0];
  // The instructions of what stands last, which a repetition copies; 0 when nothing can be repeated.
  let last = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\' && pattern[i + 1] === 'Q') {
      const end = pattern.indexOf('\\E', i + 2);
      const quoted = (end === -1 ? pattern.length : end) - (i + 2);
      i = end === -1 ? pattern.length : end + 1;
      group.sum += quoted;
      last = quoted > 0 ? 1 : 0;
    } else if (c === '\\' || c === '[') {
      // An escape, or a class up to its closing `]` (one first in it, as in `[]a]` or `[^]a]`, is one of its characters).
      if (c === '\\') i = escapeEnd(pattern, i);
      else {
        i += pattern[i + 1] === '^' ? 2 : 1;
        if (pattern[i] === ']') i++;
        while (i < pattern.length && pattern[i] !== ']') {
          if (pattern[i] === '[' && pattern[i + 1] === ':') {
            const end = pattern.indexOf(':]', i + 2);
            i = end === -1 ? i + 1 : end + 2;
          } else i = pattern[i] === '\\' ? escapeEnd(pattern, i) + 1 : i + 1;
        }
      }
      group.sum++;
      last = 1;
    } else if (c === '(') {
      // `(?i)` sets flags and holds nothing; `(?i:`, `(?:`, `(?P<name>` and `(?<name>` open a group as `(` does.
      if (pattern[i + 1] === '?') {
        const head = /^\(\?(?:P?<[^>]*>|[a-zA-Z-]*([:)]))/.exec(pattern.slice(i, i + 64));
        if (head !== null) i += head[0].length - 1;
        if (head?.[1] === ')') {
          last = 0;
          continue;
        }
      }
      groups.push((group = { sum: 0, longest: 0 }));
      last = 0;
    } else if (c === '|') {
      group.longest = Math.max(group.longest, group.sum);
      group.sum = 0;
      last = 0;
    } else if (c === ')' && groups.length > 1) {
      const inner = Math.max(group.longest, group.sum);
      groups.pop();
      group = groups[groups.length - 1];
      group.sum += inner;
      last = inner;
    } else if (c === '{') {
      const count = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 16));
      if (count === null) {
        group.sum++;
        last = 1;
        continue;
      }
      const copies = count[2] === undefined ? +count[1] : count[3] === '' ? +count[1] + 1 : +count[3];
      group.sum += (copies - 1) * last;
      i += count[0].length - 1;
      last = 0;
    } else if (c === '*' || c === '+' || c === '?') {
      last = 0;
    } else {
      group.sum++;
      last = 1;
    }
  }
  while (groups.length > 1) {
    const inner = Math.max(group.longest, group.sum);
    groups.pop();
    group = groups[groups.length - 1];
    group.sum += inner;
  }
  return Math.max(group.longest, group.sum);
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
    return `'${pattern.slice(0, 80)}' compiles to a program of at least ${least} instructions, over the limit of ${maxSize} (the Module's config.regex_max_size): simplify it or raise the limit`;
  const re = compileProgram(pattern);
  if (typeof re === 'string') return re;
  const size = re.programSize();
  if (size > maxSize) {
    return `'${pattern}' compiles to a program of ${size} instructions, over the limit of ${maxSize} (the Module's config.regex_max_size): simplify it or raise the limit`;
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
        if (typeof automaton === 'string') outcome = `'${pattern}' ${automaton}`;
        else if (bytes + automaton.bytes > totalBytes)
          outcome = `'${pattern}' would take the automata of the configuration's patterns past ${totalBytes / 1024 / 1024} MiB: use fewer or simpler patterns`;
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
