/**
 * @module gateway/match/substitution
 * `regex_rewrite` and `regex_redirect` (`{pattern, substitution}`), as
 * Envoy's `RegexMatchAndSubstitute` applies them with RE2's `GlobalReplace`:
 * every match of the pattern in the path is replaced, left to right and
 * without overlap, by the substitution, in which `\1` to `\9` stand for the
 * pattern's groups, `\0` for the whole match and `\\` for a backslash. The
 * substitution is checked when the configuration loads, so that a group the
 * pattern does not have is a problem then, not a wrong path later.
 *
 * Finding groups takes RE2's program, not an automaton, and costs up to
 * the threads the program runs at once (./search-threads), times the group
 * positions each keeps, for each character a search reads: each search is
 * charged so to a {@link MatchMeter} before it runs, and a pattern that
 * could not rewrite a path of {@link MIN_REWRITTEN_LENGTH} characters
 * within the budget is refused when the configuration loads.
 */
import type { Steps } from '../slices';
import { compileRegex, createMatchMeter, DEFAULT_MATCH_BUDGET, quoted, type MatchMeter, type RE2JS } from './regex';
import { searchThreadsSteps } from './search-threads';

/**
 * What one search by a pattern that runs at most `threads` threads at once
 * and has `groups` groups costs, in the meter's steps, for each character
 * it may read. re2js finds a match, then its groups, by a backtracker or,
 * for a longer text or a program past 500 instructions, by running its
 * threads side by side, each with the positions of the groups it has
 * passed, copied as the thread advances: up to about 2 ns for each thread,
 * character and position kept (two a group, two for the whole match), and
 * 20 ns more, where a step is about 4 ns.
 */
export function searchStepsPerCharacter(threads: number, groups: number): number {
  return threads * (groups + 6);
}

/** What a search costs, in steps, whatever it reads: setting up its machine and its groups' positions. */
export const SEARCH_BASE_STEPS = 256;

/**
 * The shortest path a rewrite must be able to read within the budget: a
 * pattern whose searches would refuse shorter ones (thousands of
 * instructions, or hundreds of groups) is refused when the configuration
 * loads, rather than answering 414 to ordinary requests.
 */
export const MIN_REWRITTEN_LENGTH = 256;

/** A compiled rewrite: the pattern, and the substitution as literal text and group numbers. */
export interface Substitution {
  readonly pattern: RE2JS;
  /** What a search costs for each character it may read: see {@link searchStepsPerCharacter}. */
  readonly stepsPerCharacter: number;
  readonly parts: readonly (string | number)[];
  /** What one rewrite's searches may cost: a rewrite runs whole, at once, so that one meter serves every request. */
  readonly meter: MatchMeter;
}

/** Reads a substitution for a pattern of `groups` groups, or says why it cannot be read. */
function substitutionParts(text: string, groups: number): (string | number)[] | string {
  const parts: (string | number)[] = [];
  let literal = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== '\\') {
      literal += c;
      continue;
    }
    const next = text[++i];
    if (next === '\\') {
      literal += '\\';
    } else if (next !== undefined && next >= '0' && next <= '9') {
      const group = next.charCodeAt(0) - 48;
      if (group > groups) {
        return `refers to group \\${group}, but the pattern has ${groups === 0 ? 'no group' : groups === 1 ? 'one group' : `${groups} groups`}`;
      }
      if (literal !== '') parts.push(literal);
      literal = '';
      parts.push(group);
    } else {
      return 'holds a backslash that stands before neither a group number (\\1) nor another backslash (\\\\ for one)';
    }
  }
  if (literal !== '') parts.push(literal);
  return parts;
}

/** A rewrite whose pattern and substitution are valid, read but not yet held to a budget. */
export interface ReadSubstitution {
  readonly pattern: RE2JS;
  readonly groups: number;
  readonly parts: readonly (string | number)[];
}

/** Why a rewrite cannot be served, with its field. */
export interface SubstitutionProblem {
  readonly field: 'pattern' | 'substitution';
  readonly message: string;
}

/**
 * Reads `{pattern, substitution}`, its pattern held to `maxSize`
 * instructions: a substitution that refers to a group the pattern does not
 * have is a problem of its field.
 */
export function readSubstitution(
  rewrite: { readonly pattern: string; readonly substitution: string },
  maxSize: number,
): ReadSubstitution | SubstitutionProblem {
  const pattern = compileRegex(rewrite.pattern, maxSize);
  if (typeof pattern === 'string') return { field: 'pattern', message: pattern };
  const groups = pattern.groupCount();
  const parts = substitutionParts(rewrite.substitution, groups);
  if (typeof parts === 'string') return { field: 'substitution', message: parts };
  return { pattern, groups, parts };
}

/**
 * Compiles `{pattern, substitution}`, its searches held to `budget` steps a
 * rewrite, a step every millisecond or so of reading how many threads they
 * run (see ../slices); the problems come with the field they are about.
 */
export function* compileSubstitutionSteps(
  rewrite: { readonly pattern: string; readonly substitution: string },
  maxSize: number,
  budget: number = DEFAULT_MATCH_BUDGET,
): Steps<Substitution | SubstitutionProblem> {
  const read = readSubstitution(rewrite, maxSize);
  if (!('parts' in read)) return read;
  const { pattern, groups, parts } = read;
  const size = pattern.programSize();
  const threads = Math.min(size, (yield* searchThreadsSteps(pattern)) ?? size);
  const stepsPerCharacter = searchStepsPerCharacter(threads, groups);
  // A path it matches whole: one search reads all of it and its end, and the one after the match reads its end.
  const longest = Math.floor((budget - 2 * SEARCH_BASE_STEPS) / stepsPerCharacter) - 2;
  if (longest < MIN_REWRITTEN_LENGTH)
    return {
      field: 'pattern',
      message: `${quoted(rewrite.pattern)} (${groups} groups, up to ${threads} threads of its program at once) could rewrite a path of ${Math.max(0, longest)} characters at most within what one request may make a search read, and longer ones would be refused: use fewer groups ((?:...) groups nothing) or a simpler pattern`,
    };
  return { pattern, stepsPerCharacter, parts, meter: createMatchMeter(budget) };
}

/** Whether a compiled rewrite came out, rather than a problem. */
export function isSubstitution(value: Substitution | SubstitutionProblem): value is Substitution {
  return 'meter' in value;
}

/**
 * `text` with every match of the pattern replaced; `text` itself when
 * nothing matches. Each search is charged to the rewrite's meter before it
 * runs, for all the text it may read: all that follows the last match,
 * since a thread of higher priority than the match found may read on to
 * the end (`x.*y|x`). It throws the 414 of a path too long for the pattern.
 */
export function substitute(rewrite: Substitution, text: string): string {
  const meter = rewrite.meter;
  meter.restart();
  const matcher = rewrite.pattern.matcher(text);
  let out = '';
  let last = 0;
  let count = 0;
  for (let from = 0; ;) {
    meter.charge(SEARCH_BASE_STEPS + rewrite.stepsPerCharacter * (text.length - from + 1), 'url');
    if (!matcher.find()) break;
    out += text.slice(last, matcher.start());
    for (const part of rewrite.parts) out += typeof part === 'string' ? part : (matcher.group(part) ?? '');
    last = matcher.end();
    from = last;
    count++;
  }
  return count === 0 ? text : out + text.slice(last);
}
