/**
 * @module gateway/match/regex
 * The regular expressions of Mappings, as Envoy runs them: RE2's syntax and
 * semantics (re2js, pure JavaScript), so that matching takes time linear in
 * the text whatever the pattern (no backtracking: `(a+)+$` cannot hang the
 * process), a whole-text match where Envoy's matchers want one, and a bound
 * on each compiled program, as Envoy's `max_program_size` (Emissary sets
 * 200, its Module's `regex_max_size`), since a program's size is what each
 * character of the text costs. re2js is required when a first pattern is
 * checked: a config without one never holds its program tables in the heap.
 */
import type { RE2JS } from 're2js';

export type { RE2JS } from 're2js';

type Re2js = typeof import('re2js');

let loaded: Re2js | undefined;

function re2js(): Re2js {
  return (loaded ??= require('re2js') as Re2js);
}

/** Emissary's `regex_max_size`, and so Envoy's `max_program_size` behind it, when a Module does not say. */
export const DEFAULT_REGEX_MAX_SIZE = 200;

/** Why `pattern` is no RE2 expression, or undefined when it is one. */
export function regexSyntaxProblem(pattern: string): string | undefined {
  try {
    re2js().RE2JS.compile(pattern);
    return undefined;
  } catch (err) {
    return syntaxMessage(pattern, err);
  }
}

function syntaxMessage(pattern: string, err: unknown): string {
  if (!(err instanceof re2js().RE2JSSyntaxException))
    return `'${pattern}' cannot be compiled: ${(err as Error).message}`;
  const lookaround = /^\(\?<?[=!]/.test(err.getPattern() ?? '');
  return `'${pattern}' is no RE2 expression (${err.getDescription()}${err.getPattern() ? `: ${err.getPattern()}` : ''})${
    lookaround ? '; RE2, as Envoy uses it, has no lookahead or lookbehind' : ''
  }`;
}

/**
 * Compiles `pattern`, or says why it cannot be served: no RE2 expression,
 * or a program larger than `maxSize` instructions.
 */
export function compileRegex(pattern: string, maxSize: number): RE2JS | string {
  let re: RE2JS;
  try {
    re = re2js().RE2JS.compile(pattern);
  } catch (err) {
    return syntaxMessage(pattern, err);
  }
  const size = re.programSize();
  if (size > maxSize) {
    return `'${pattern}' compiles to a program of ${size} instructions, over the limit of ${maxSize} (the Module's config.regex_max_size): simplify it or raise the limit`;
  }
  return re;
}

/** Whether a pattern matches in any case as a whole: it starts with RE2's `(?i)` flag. */
export function foldsCase(pattern: string): boolean {
  return /^\(\?[a-zA-Z]*i[a-zA-Z]*\)/.test(pattern);
}
