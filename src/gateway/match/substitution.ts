/**
 * @module gateway/match/substitution
 * `regex_rewrite` and `regex_redirect` (`{pattern, substitution}`), as
 * Envoy's `RegexMatchAndSubstitute` applies them with RE2's `GlobalReplace`:
 * every match of the pattern in the path is replaced, left to right and
 * without overlap, by the substitution, in which `\1` to `\9` stand for the
 * pattern's groups, `\0` for the whole match and `\\` for a backslash. The
 * substitution is checked when the configuration loads, so that a group the
 * pattern does not have is a problem then, not a wrong path later.
 */
import { compileRegex, type RE2JS } from './regex';

/** A compiled rewrite: the pattern, and the substitution as literal text and group numbers. */
export interface Substitution {
  readonly pattern: RE2JS;
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
  return { pattern, parts };
}

/** Whether a compiled rewrite came out, rather than a problem. */
export function isSubstitution(value: Substitution | { field: string; message: string }): value is Substitution {
  return 'parts' in value;
}

/** `text` with every match of the pattern replaced; `text` itself when nothing matches. */
export function substitute(rewrite: Substitution, text: string): string {
  const matcher = rewrite.pattern.matcher(text);
  let out = '';
  let last = 0;
  let count = 0;
  while (matcher.find()) {
    out += text.slice(last, matcher.start());
    for (const part of rewrite.parts) out += typeof part === 'string' ? part : (matcher.group(part) ?? '');
    last = matcher.end();
    count++;
  }
  return count === 0 ? text : out + text.slice(last);
}
