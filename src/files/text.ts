/**
 * @module files/text
 * The text of a file read with a bound (./bounded), which must be UTF-8.
 * Decoded leniently, a byte that is not UTF-8 would become U+FFFD unseen:
 * `\xC0\xAE` in a prefix, or two users whose Latin-1 names differ in one
 * letter, would both read as the same replacement character, and the
 * gateway would serve what nobody wrote.
 */
import { isUtf8 } from 'node:buffer';
import { readBounded, readBoundedSync } from './bounded';

/** A file whose bytes are not UTF-8 text. */
export class NotUtf8Error extends Error {
  readonly code = 'EILSEQ';
  constructor(
    readonly file: string,
    /** The first line (from 1) that holds a byte that is not UTF-8. */
    readonly line: number,
  ) {
    super(`is not UTF-8 text: line ${line} holds a byte that is not UTF-8; save the file as UTF-8`);
    this.name = 'NotUtf8Error';
  }
}

const LINE_FEED = 0x0a;

/** The text of `bytes` read from `file`. Throws {@link NotUtf8Error} when they are not UTF-8. */
export function utf8Text(file: string, bytes: Buffer): string {
  if (isUtf8(bytes)) return bytes.toString('utf8');
  // A line feed is never part of a longer UTF-8 sequence: each line can be checked alone.
  let line = 1;
  for (let start = 0; start < bytes.length; line++) {
    const end = bytes.indexOf(LINE_FEED, start);
    const stop = end === -1 ? bytes.length : end;
    if (!isUtf8(bytes.subarray(start, stop))) break;
    start = stop + 1;
  }
  throw new NotUtf8Error(file, line);
}

/** The UTF-8 text of `file`, at most `limit` bytes of it ({@link readBounded}). */
export async function readBoundedText(file: string, limit: number): Promise<string> {
  return utf8Text(file, await readBounded(file, limit));
}

/** {@link readBoundedText}, synchronously. */
export function readBoundedTextSync(file: string, limit: number): string {
  return utf8Text(file, readBoundedSync(file, limit));
}
