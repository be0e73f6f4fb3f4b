/**
 * @module gateway/match/program-size
 * The size of a pattern's RE2 program, bounded from below by reading the
 * pattern alone: re2js compiles a pattern whole before its size can be
 * known, and thousands of copies of a counted repetition take it long.
 */

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
 * makes of what it repeats, so that thousands of copies (`[a-z]{1000}`
 * many times over) are refused before re2js takes long to compile them.
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

/** The code point an escape or character at `i` of a class stands for, and where it ends; no code point for a class escape (`\pL`, `\d`). */
function classItem(pattern: string, i: number): { rune?: number; end: number } {
  if (pattern[i] !== '\\') {
    const rune = pattern.codePointAt(i)!;
    return { rune, end: i + (rune > 0xffff ? 1 : 0) };
  }
  const end = escapeEnd(pattern, i);
  const kind = pattern[i + 1];
  if (kind === 'x') {
    const hex = pattern[i + 2] === '{' ? pattern.slice(i + 3, end) : pattern.slice(i + 2, end + 1);
    return { rune: parseInt(hex, 16) || 0, end };
  }
  if (kind >= '0' && kind <= '7') return { rune: parseInt(pattern.slice(i + 1, end + 1), 8), end };
  const named: Record<string, number> = { n: 10, t: 9, r: 13, f: 12, v: 11, a: 7 };
  if (kind in named) return { rune: named[kind], end };
  if (/[pPdDwWsS]/.test(kind)) return { end };
  return { rune: pattern.codePointAt(i + 1), end };
}

/** The letters RE2 folds case among: outside them, `(?i)` changes nothing. */
const FOLD_LOW = 0x41;
const FOLD_HIGH = 0x1e943;

/** What compiling a pattern costs re2js beyond its length, read without compiling it. */
export interface ClassCost {
  /** Unicode classes (`\pL`, `\p{Greek}`, `\PN`): each built from Unicode's tables. */
  readonly unicodeClasses: number;
  /** Characters of classes and ranges matched in any case (`(?i)`): each one's other cases are looked up. */
  readonly foldedCharacters: number;
}

/**
 * What the classes of `pattern` cost re2js to compile: a character range
 * matched in any case is folded a character at a time (the whole of
 * `(?i)[\x{41}-\x{1E943}]`), and each Unicode class is built from its tables. A
 * pattern is taken as matched in any case when it sets `i` anywhere.
 */
export function classCost(pattern: string): ClassCost {
  const folds = /\(\?[a-zA-Z]*i[a-zA-Z-]*[:)]/.test(pattern);
  let unicodeClasses = 0;
  let foldedCharacters = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\' && (pattern[i + 1] === 'p' || pattern[i + 1] === 'P')) unicodeClasses++;
    if (!inClass) {
      if (c === '\\') i = escapeEnd(pattern, i);
      else if (c === '[') {
        inClass = true;
        if (pattern[i + 1] === '^') i++;
        // A `]` first in a class is one of its characters.
        if (pattern[i + 1] === ']') {
          i++;
          if (folds) foldedCharacters++;
        }
      }
      continue;
    }
    if (c === ']') {
      inClass = false;
      continue;
    }
    if (c === '[' && pattern[i + 1] === ':') {
      const end = pattern.indexOf(':]', i + 2);
      i = end === -1 ? i : end + 1;
      continue;
    }
    const low = classItem(pattern, i);
    i = low.end;
    if (low.rune === undefined) continue;
    let high = low.rune;
    if (pattern[i + 1] === '-' && pattern[i + 2] !== ']' && i + 2 < pattern.length) {
      const upper = classItem(pattern, i + 2);
      if (upper.rune !== undefined) {
        high = upper.rune;
        i = upper.end;
      }
    }
    if (folds) foldedCharacters += Math.max(0, Math.min(high, FOLD_HIGH) - Math.max(low.rune, FOLD_LOW) + 1);
  }
  return { unicodeClasses, foldedCharacters };
}
