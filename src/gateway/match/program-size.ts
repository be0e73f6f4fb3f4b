/**
 * @module gateway/match/program-size
 * The size of a pattern's RE2 program, bounded from below by reading the
 * pattern alone: re2js compiles a pattern whole before its size can be
 * known, and takes seconds over a few thousand copies of a counted
 * repetition.
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
 * makes of what it repeats. re2js would otherwise take seconds to compile
 * a few thousand copies (`[a-z]{1000}` 300 times) before their number
 * could be refused.
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
