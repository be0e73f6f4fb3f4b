/**
 * @module gateway/match/case-fold
 * Prefixes compared in any case (`case_sensitive: false`): ASCII letters as
 * Envoy folds them, and the characters beyond ASCII that backends fold to
 * an ASCII letter, so that the route table can refuse a path spelt with one.
 */

/**
 * Characters beyond ASCII that backends matching in any case read as an
 * ASCII letter, as a normal path escapes them (UTF-8, upper-case hex): Java's
 * `equalsIgnoreCase`, Go's `EqualFold` and .NET's `OrdinalIgnoreCase` fold
 * `ſ` (U+017F) to s, the Kelvin sign (U+212A) to k, and `ı` (U+0131) or
 * `İ` (U+0130) to i.
 */
const UNICODE_FOLDS: readonly (readonly [string, number])[] = [
  ['%C5%BF', 115],
  ['%E2%84%AA', 107],
  ['%C4%B1', 105],
  ['%C4%B0', 105],
];

/** The entry of {@link UNICODE_FOLDS} whose escape stands at `at` in `path`, if any. */
function unicodeFoldAt(path: string, at: number): readonly [string, number] | undefined {
  for (let i = 0; i < UNICODE_FOLDS.length; i++) if (path.startsWith(UNICODE_FOLDS[i][0], at)) return UNICODE_FOLDS[i];
  return undefined;
}

/**
 * Where the prefix `folded` (lower case) ends in `path` when its letters are
 * compared in any case, the characters of {@link UNICODE_FOLDS} included;
 * -1 when it does not start `path`.
 */
export function endOfUnicodeFolded(path: string, folded: string): number {
  let p = 0;
  for (let k = 0; k < folded.length; k++, p++) {
    let c = path.charCodeAt(p);
    if (c === 37) {
      const fold = unicodeFoldAt(path, p);
      if (fold !== undefined) {
        if (fold[1] !== folded.charCodeAt(k)) return -1;
        p += fold[0].length - 1;
        continue;
      }
    }
    if (c >= 65 && c <= 90) c += 32;
    if (c !== folded.charCodeAt(k)) return -1;
  }
  return p;
}

/** ASCII letters in lower case, as Envoy folds a case-insensitive prefix. */
export function foldCase(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** Whether `path` starts with `folded` (lower case), its ASCII letters compared in either case. Allocates nothing. */
export function startsWithFolded(path: string, folded: string): boolean {
  if (path.length < folded.length) return false;
  for (let i = 0; i < folded.length; i++) {
    let c = path.charCodeAt(i);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== folded.charCodeAt(i)) return false;
  }
  return true;
}
