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
 * Finding groups takes RE2's program, not an automaton: each search costs
 * up to the program's size for each character it reads, each step some
 * ten times an automaton's, and is charged so to a {@link MatchMeter}
 * before it runs.
 */
import { compileRegex, createMatchMeter, type MatchMeter, type RE2JS } from './regex';

/**
 * What a search charges for each instruction of the program and character
 * of the text: re2js's search, with the groups it records (many groups
 * make its threads costly to copy), takes up to several times an
 * automaton's step for each.
 */
export const SEARCH_STEP_UNITS = 16;

/** A compiled rewrite: the pattern, and the substitution as literal text and group numbers. */
export interface Substitution {
  readonly pattern: RE2JS;
  /** The pattern's program size, in instructions: what a search costs for each character it reads. */
  readonly size: number;
  readonly parts: readonly (string | number)[];
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

/**
 * Compiles `{pattern, substitution}`; the problems come with the field
 * (`pattern` or `substitution`) they are about.
 */
export function compileSubstitution(
  rewrite: { readonly pattern: string; readonly substitution: string },
  maxSize: number,
): Substitution | { field: 'pattern' | 'substitution'; message: string } {
  const pattern = compileRegex(rewrite.pattern, maxSize);
  if (typeof pattern === 'string') return { field: 'pattern', message: pattern };
  const parts = substitutionParts(rewrite.substitution, pattern.groupCount());
  if (typeof parts === 'string') return { field: 'substitution', message: parts };
  return { pattern, size: pattern.programSize(), parts };
}

/** Whether a compiled rewrite came out, rather than a problem. */
export function isSubstitution(value: Substitution | { field: string; message: string }): value is Substitution {
  return 'parts' in value;
}

/**
 * `text` with every match of the pattern replaced; `text` itself when
 * nothing matches. Each search is charged to `meter` (by default one of
 * its own, of the default budget) before it runs: it throws the 414 of a
 * path too long for the pattern.
 */
export function substitute(rewrite: Substitution, text: string, meter: MatchMeter = createMatchMeter()): string {
  const matcher = rewrite.pattern.matcher(text);
  let out = '';
  let last = 0;
  let count = 0;
  for (let from = 0; ;) {
    meter.charge(SEARCH_STEP_UNITS * rewrite.size * (text.length - from + 1), 'url');
    if (!matcher.find()) break;
    out += text.slice(last, matcher.start());
    for (const part of rewrite.parts) out += typeof part === 'string' ? part : (matcher.group(part) ?? '');
    last = matcher.end();
    from = last;
    count++;
  }
  return count === 0 ? text : out + text.slice(last);
}
