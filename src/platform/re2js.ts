/**
 * @module platform/re2js
 * What Gatehouse reads of a compiled re2js pattern beyond its API: the
 * deterministic automaton re2js builds lazily for `testExact`, driven here
 * state by state, so that gateway/match/automaton can build it whole when
 * a configuration loads; and the same automaton stepped as a search, whose
 * states are the sets of program threads a search runs at once, so that
 * gateway/match/search-threads can tell what a search costs. Written
 * against re2js 2.10.0 (pinned in
 * package.json); test/platform/re2js.test.ts fails, naming the version,
 * when a release changes any of it, and {@link wholeTextAutomaton} gives
 * nothing for a pattern of another shape rather than a wrong automaton.
 */
import type { RE2JS } from 're2js';

/** The re2js release these functions were written against. */
export const RE2JS_VERSION = '2.10.0';

/** re2js's flags of the text's start (`EMPTY_BEGIN_TEXT | EMPTY_BEGIN_LINE`), as its automaton starts at position 0. */
const BEGIN_FLAGS = 4 | 1;
/** re2js's flags of a search's start after a line break (`EMPTY_BEGIN_LINE`). */
const LINE_FLAGS = 1;
/** re2js's `DFA.FLAG_LAST_WORD`: a search's start after a word character. */
const LAST_WORD_FLAG = 512;
/** re2js's `RE2Flags.ANCHOR_BOTH`: the match must span the whole text. */
const ANCHOR_BOTH = 2;
/** re2js's `DFA.FLAG_EMPTY_MASK`: every empty-width condition (`^`, `$`, `\b`...) met at once. */
const ALL_EMPTY_FLAGS = 255;
/** re2js's `RE2Flags.UNANCHORED`: a match may start anywhere, as a search's does. */
const UNANCHORED = 0;
/** The rune re2js steps its automaton with past the end of the text. */
const END_OF_TEXT = -1;

/** One state of re2js's automaton: a value to hand back to {@link Re2jsAutomaton}, never to read. */
export interface Re2jsState {
  readonly nfaStates: readonly number[];
  readonly isMatch: boolean;
}

/** re2js's `DFA`, as far as it is driven here. */
interface Dfa {
  readonly failed: boolean;
  readonly numClasses: number;
  readonly classBounds: Int32Array;
  readonly latin1Class: Int32Array;
  makeState(pcs: number[], flag: number, ids: number[]): Re2jsState | null;
  closure(pcs: readonly number[], flag: number): { readonly pcs: readonly number[] };
  step(state: Re2jsState, cls: number, rune: number, anchor: number): Re2jsState | null;
}

/** re2js's `RE2`, the compiled pattern behind an `RE2JS`, as far as it is read here. */
interface Compiled {
  readonly prog: { readonly start: number; readonly numLb?: number };
  readonly dfa: Dfa;
  lazyDFA: Dfa | null;
}

/** re2js's whole-text automaton of one pattern, its states made as they are asked for. */
export interface Re2jsAutomaton {
  /** How many classes of characters it tells apart; the class past the last stands for the end of the text. */
  readonly classes: number;
  /** The first character of each class but the first (class 0 starts at 0), ascending. */
  readonly classBounds: Int32Array;
  /** The class of each Latin-1 character. */
  readonly latin1Classes: Int32Array;
  /** The state before the first character; null when re2js's memory bound for its states is spent. */
  start(): Re2jsState | null;
  /**
   * The state after reading `rune` of class `cls` from `state`, or after
   * the end of the text for the class past the last (its rune is not read);
   * null when re2js's memory bound for its states is spent.
   */
  step(state: Re2jsState, cls: number, rune: number): Re2jsState | null;
  /** How many program threads a state holds: none, and no text that goes on can match. */
  threads(state: Re2jsState): number;
  /** Whether the text read up to a state matched, as re2js marks it one step late: after the end, whether the whole text matched. */
  matched(state: Re2jsState): boolean;
  /** Lets re2js forget the states made, which a caller has copied. */
  release(): void;
}

/** re2js's automaton of one pattern, stepped as a search: a match may start at any character. */
export interface Re2jsSearchAutomaton {
  /** How many classes of characters it tells apart; the class past the last stands for the end of the text. */
  readonly classes: number;
  /** The first character of each class but the first (class 0 starts at 0), ascending. */
  readonly classBounds: Int32Array;
  /**
   * The states a search starts in, one for each context it may start in
   * (the text's start, after a line break, after a word character, after
   * another); null for one when re2js's memory bound for its states is spent.
   */
  starts(): (Re2jsState | null)[];
  /**
   * The state after reading `rune` of class `cls` from `state`, or after
   * the end of the text for the class past the last; null when re2js's
   * memory bound is spent.
   */
  step(state: Re2jsState, cls: number, rune: number): Re2jsState | null;
  /** Whether the search has found a match by a state, as re2js marks it one step late. */
  matched(state: Re2jsState): boolean;
  /**
   * How many program threads (instructions) a state may run, whatever
   * empty-width conditions (`$`, `\b`) the next character meets: the most
   * re2js's program runs at once, there.
   */
  threads(state: Re2jsState): number;
  /** Lets re2js forget the states made. */
  release(): void;
}

/** re2js's compiled pattern behind `re` and its automaton, when they have the shape these functions read. */
function compiledOf(re: RE2JS): { compiled: Compiled; dfa: Dfa } | undefined {
  const compiled = (re as unknown as { re2Input?: Compiled }).re2Input;
  if (compiled === undefined || typeof compiled.prog?.start !== 'number' || (compiled.prog.numLb ?? 0) > 0)
    return undefined;
  const dfa = compiled.dfa;
  if (
    typeof dfa?.step !== 'function' ||
    typeof dfa.makeState !== 'function' ||
    typeof dfa.closure !== 'function' ||
    dfa.failed ||
    typeof dfa.numClasses !== 'number' ||
    !(dfa.classBounds instanceof Int32Array) ||
    !(dfa.latin1Class instanceof Int32Array) ||
    dfa.latin1Class.length !== 256
  )
    return undefined;
  return { compiled, dfa };
}

/**
 * The whole-text automaton re2js builds for `re`, or undefined when this
 * re2js holds it otherwise, or has none for the pattern (lookbehinds).
 */
export function wholeTextAutomaton(re: RE2JS): Re2jsAutomaton | undefined {
  const found = compiledOf(re);
  if (found === undefined) return undefined;
  const { compiled, dfa } = found;
  return {
    classes: dfa.numClasses,
    classBounds: dfa.classBounds,
    latin1Classes: dfa.latin1Class,
    start: () => dfa.makeState([compiled.prog.start], BEGIN_FLAGS, []),
    step: (state, cls, rune) => dfa.step(state, cls, cls === dfa.numClasses ? END_OF_TEXT : rune, ANCHOR_BOTH),
    threads: (state) => state.nfaStates.length,
    matched: (state) => state.isMatch,
    release() {
      compiled.lazyDFA = null;
    },
  };
}

/**
 * re2js's automaton of a search by `re`: its states are the threads its
 * program runs at once, in any of its engines, while it searches; or
 * undefined as for {@link wholeTextAutomaton}.
 */
export function searchAutomaton(re: RE2JS): Re2jsSearchAutomaton | undefined {
  const found = compiledOf(re);
  if (found === undefined) return undefined;
  const { compiled, dfa } = found;
  return {
    classes: dfa.numClasses,
    classBounds: dfa.classBounds,
    starts: () =>
      [BEGIN_FLAGS, LINE_FLAGS, LAST_WORD_FLAG, 0].map((flags) => dfa.makeState([compiled.prog.start], flags, [])),
    step: (state, cls, rune) => dfa.step(state, cls, cls === dfa.numClasses ? END_OF_TEXT : rune, UNANCHORED),
    matched: (state) => state.isMatch,
    threads: (state) => dfa.closure(state.nfaStates, ALL_EMPTY_FLAGS).pcs.length,
    release() {
      compiled.lazyDFA = null;
    },
  };
}
