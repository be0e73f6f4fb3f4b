/**
 * @module gateway/match/automaton
 * A pattern's deterministic automaton, built whole when the configuration
 * loads, so that a request is matched by one table lookup a character,
 * whatever the pattern: re2js builds its own automaton lazily, as requests
 * come, and when a pattern's states outgrow its cache it falls back to
 * simulating the program, which costs every instruction for every
 * character, so that a large pattern and a long path hold the event loop
 * in proportion to both. Built here from re2js's own construction (its
 * states, its classes of characters, its handling of `^`, `$` and `\b`),
 * read through platform/re2js, so that it matches exactly what re2js
 * would; a pattern whose automaton would not fit {@link AutomatonLimits}
 * is refused when the configuration is checked, with the reason, rather
 * than served slowly.
 */
import type { RE2JS } from 're2js';
import { wholeTextAutomaton, type Re2jsState } from '../../platform';
import type { Steps } from '../slices';

/** What building one pattern's automaton may cost. */
export interface AutomatonLimits {
  /** Most states. */
  readonly states: number;
  /** Most work: program instructions visited while the states are built. */
  readonly work: number;
}

/** The limits of one pattern's automaton by default: a build of a fraction of a second, spread over many steps, and a table of at most some MiB. */
export const DEFAULT_AUTOMATON_LIMITS: AutomatonLimits = { states: 4096, work: 1 << 19 };

/** Work done between two yields of {@link buildAutomaton}: about a millisecond. */
const WORK_PER_STEP = 4096;

/**
 * A whole-text matcher: for each state a row of the next state by class of
 * character, and in the row's last cell whether the text may end there.
 */
export class Automaton {
  /** Cells of the table: the next state's row offset, or {@link DEAD} where no match can follow. */
  private readonly next: Int32Array;
  private readonly width: number;
  private readonly latin1: Int32Array;
  private readonly bounds: Int32Array;

  constructor(next: Int32Array, width: number, latin1: Int32Array, bounds: Int32Array) {
    this.next = next;
    this.width = width;
    this.latin1 = latin1;
    this.bounds = bounds;
  }

  /** How many states it has. */
  get states(): number {
    return this.next.length / this.width;
  }

  /** The memory its table takes, in bytes. */
  get bytes(): number {
    return this.next.byteLength + this.latin1.byteLength + this.bounds.byteLength;
  }

  /** The class of a character beyond Latin-1: how many class bounds lie at or below it. */
  private classOf(rune: number): number {
    const bounds = this.bounds;
    let lo = 0;
    let hi = bounds.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (bounds[mid] <= rune) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Whether the pattern matches the whole of `text`, read as code points
   * as re2js reads a string, and what reading it cost: the characters
   * (UTF-16 units) up to where no match could follow any more, or all of
   * them and the end, each beyond Latin-1 counted {@link
   * WIDE_CHARACTER_STEPS} times; the cost times two, plus one for a match.
   */
  read(text: string): number {
    const next = this.next;
    const latin1 = this.latin1;
    const length = text.length;
    let row = 0;
    let wide = 0;
    for (let i = 0; i < length;) {
      let rune = text.charCodeAt(i++);
      if (rune >= 0xd800 && rune <= 0xdbff && i < length) {
        const low = text.charCodeAt(i);
        if (low >= 0xdc00 && low <= 0xdfff) {
          rune = (rune - 0xd800) * 1024 + (low - 0xdc00) + 0x10000;
          i++;
        }
      }
      let cls: number;
      if (rune <= 255) cls = latin1[rune];
      else {
        cls = this.classOf(rune);
        wide++;
      }
      row = next[row + cls];
      if (row === DEAD) return (i + wide * (WIDE_CHARACTER_STEPS - 1)) * 2;
    }
    return (length + 1 + wide * (WIDE_CHARACTER_STEPS - 1)) * 2 + next[row + this.width - 1];
  }

  /** Whether the pattern matches the whole of `text`. */
  matches(text: string): boolean {
    return (this.read(text) & 1) === 1;
  }
}

/** A cell's value where no match can follow, whatever comes next. */
const DEAD = -1;

/**
 * What reading a character beyond Latin-1 costs, in the steps of one
 * within it: its class is found by a binary search of the class bounds
 * (some thousands for `\pL`), many times as long as a Latin-1
 * character's table lookup.
 */
export const WIDE_CHARACTER_STEPS = 16;

/**
 * Builds the automaton of `re`, a step every millisecond or so of work (see
 * ../slices), or says why it cannot be built within `limits`.
 */
export function* buildAutomaton(
  re: RE2JS,
  limits: AutomatonLimits = DEFAULT_AUTOMATON_LIMITS,
): Steps<Automaton | string> {
  const dfa = wholeTextAutomaton(re);
  if (dfa === undefined) return 'cannot be matched by an automaton';
  try {
    const classes = dfa.classes;
    const width = classes + 1;
    // A character of each class to step with: the lowest of it.
    const representative = new Int32Array(classes);
    for (let c = 1; c < classes; c++) representative[c] = dfa.classBounds[c - 1];
    const start = dfa.start();
    if (start === null) return tooLarge(limits);
    const found = new Map<Re2jsState, number>([[start, 0]]);
    const states: Re2jsState[] = [start];
    const rows: Int32Array[] = [];
    let work = 0;
    let sinceYield = 0;
    for (let s = 0; s < states.length; s++) {
      const state = states[s];
      const row = new Int32Array(width);
      for (let c = 0; c <= classes; c++) {
        const cost = dfa.threads(state) + 1;
        work += cost;
        sinceYield += cost;
        if (work > limits.work) return tooLarge(limits);
        const next = dfa.step(state, c, c < classes ? representative[c] : 0);
        if (next === null) return tooLarge(limits);
        let index = found.get(next);
        if (index === undefined) {
          if (states.length >= limits.states) return tooLarge(limits);
          index = states.length;
          found.set(next, index);
          states.push(next);
        }
        row[c] = index;
      }
      rows.push(row);
      if (sinceYield >= WORK_PER_STEP) {
        sinceYield = 0;
        yield;
      }
    }
    const table = new Int32Array(states.length * width);
    for (let s = 0; s < states.length; s++) {
      const row = rows[s];
      const at = s * width;
      for (let c = 0; c < classes; c++) {
        const target = row[c];
        // A state with no thread left cannot end in a match: the text is refused there.
        table[at + c] = dfa.threads(states[target]) === 0 ? DEAD : target * width;
      }
      // re2js marks a state as matching one step late: the state past the end tells whether the text may end here.
      table[at + classes] = dfa.matched(states[row[classes]]) ? 1 : 0;
    }
    return new Automaton(table, width, Int32Array.from(dfa.latin1Classes), Int32Array.from(dfa.classBounds));
  } finally {
    // The states re2js built are copied into the table: they are not kept.
    dfa.release();
  }
}

function tooLarge(limits: AutomatonLimits): string {
  return `needs an automaton of more than ${limits.states} states or ${limits.work} steps to build, which could not be matched in bounded time: simplify it (a counted or optional part after .* multiplies the states)`;
}
