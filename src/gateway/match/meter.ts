/**
 * @module gateway/match/meter
 * What the patterns read for one routing decision, counted against a
 * budget: past it the request is refused, so that no request, whatever
 * the configuration, holds the event loop long by pattern matching.
 */
import { HttpError } from '../../http';

/**
 * How much one routing decision may read by pattern, in steps: a step is
 * about the time an automaton takes for one Latin-1 character (see
 * ./automaton for wider ones, ./substitution for searches with groups),
 * so that one request holds the event loop a few milliseconds at most.
 */
export const DEFAULT_MATCH_BUDGET = 1 << 20;

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
