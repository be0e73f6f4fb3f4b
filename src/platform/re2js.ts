/**
 * @module platform/re2js
 * What Gatehouse reads of a compiled re2js pattern beyond its API: the
 * deterministic automaton re2js builds lazily for `testExact`, driven here
 * state by state, so that gateway/match/automaton can build it whole when
 * a configuration loads. Written against re2js 2.10.0 (pinned in
 * package.json); test/platform/re2js.test.ts fails, naming the version,
 * when a release changes any of it, and {@link wholeTextAutomaton} gives
 * nothing for a pattern of another shape rather than a wrong automaton.
 */
import type { RE2JS } from 're2js';

/** The re2js release these functions were written against. */
export const RE2JS_VERSION = '2.10.0';

/** re2js's flags of the text's start (`EMPTY_BEGIN_TEXT | EMPTY_BEGIN_LINE`), as its automaton starts at position 0. */
const BEGIN_FLAGS = 4 | 1;
/** re2js's `RE2Flags.ANCHOR_BOTH`: the match must span the whole text. */
const ANCHOR_BOTH = 2;
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

/**
 * The whole-text automaton re2js builds for `re`, or undefined when this
 * re2js holds it otherwise, or has none for the pattern (lookbehinds).
 */
export function wholeTextAutomaton(re: RE2JS): Re2jsAutomaton | undefined {
  const compiled = (re as unknown as { re2Input?: Compiled }).re2Input;
  if (compiled === undefined || typeof compiled.prog?.start !== 'number' || (compiled.prog.numLb ?? 0) > 0)
    return undefined;
  const dfa = compiled.dfa;
  if (
    typeof dfa?.step !== 'function' ||
    typeof dfa.makeState !== 'function' ||
    dfa.failed ||
    typeof dfa.numClasses !== 'number' ||
    !(dfa.classBounds instanceof Int32Array) ||
    !(dfa.latin1Class instanceof Int32Array) ||
    dfa.latin1Class.length !== 256
  )
    return undefined;
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
