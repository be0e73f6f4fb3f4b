/**
 * @module gateway/match/search-threads
 * The most threads of a pattern's program a search runs at once, read from
 * the states of re2js's automaton stepped as a search (through
 * platform/re2js): what each character a search reads costs, where the
 * program's size only bounds it. A search finds groups by running the
 * program (a backtracker, or every thread at once), and at each character
 * it runs no more threads than the state the automaton is in holds: a
 * pattern of a thousand alternatives runs a few dozen threads past its
 * first characters, where its program holds thousands of instructions.
 */
import type { RE2JS } from 're2js';
import { searchAutomaton, type Re2jsState } from '../../platform';
import type { Steps } from '../slices';
import type { AutomatonLimits } from './automaton';

/**
 * What finding the most threads of one pattern may cost: the states of its
 * search, and the work of making them, as a pattern's automaton may.
 */
export const SEARCH_THREADS_LIMITS: AutomatonLimits = { states: 4096, work: 1 << 19 };

/** Work done between two yields of {@link searchThreadsSteps}: about a millisecond. */
const WORK_PER_STEP = 4096;

/**
 * The most threads a search by `re` runs at once, from whatever context it
 * starts in, a step every millisecond or so of work (see ../slices); or
 * undefined when its states would pass `limits` (the program's size
 * then bounds them).
 */
export function* searchThreadsSteps(
  re: RE2JS,
  limits: AutomatonLimits = SEARCH_THREADS_LIMITS,
): Steps<number | undefined> {
  const search = searchAutomaton(re);
  if (search === undefined) return undefined;
  try {
    const classes = search.classes;
    // A character of each class to step with: the lowest of it.
    const representative = new Int32Array(classes);
    for (let c = 1; c < classes; c++) representative[c] = search.classBounds[c - 1];
    const states: Re2jsState[] = [];
    const found = new Set<Re2jsState>();
    for (const start of search.starts()) {
      if (start === null) return undefined;
      if (!found.has(start)) {
        found.add(start);
        states.push(start);
      }
    }
    let most = 0;
    let work = 0;
    let sinceYield = 0;
    for (let s = 0; s < states.length; s++) {
      const state = states[s];
      const threads = search.threads(state);
      most = Math.max(most, threads);
      for (let c = 0; c < classes; c++) {
        work += threads + 1;
        sinceYield += threads + 1;
        if (work > limits.work) return undefined;
        const next = search.step(state, c, representative[c]);
        if (next === null) return undefined;
        if (found.has(next)) continue;
        if (states.length >= limits.states) return undefined;
        found.add(next);
        states.push(next);
      }
      if (sinceYield >= WORK_PER_STEP) {
        sinceYield = 0;
        yield;
      }
    }
    return most;
  } finally {
    // The states were only counted: none is kept.
    search.release();
  }
}
