/**
 * @module telemetry/log-lines
 * What a log destination needs to know of its descriptor and of the lines it
 * is given: what kind of thing it writes into, how to write into a pipe or a
 * terminal without waiting, how many lines a chunk holds, and the line that
 * says how many were dropped.
 */
import { constants, fstatSync, openSync } from 'node:fs';
import { hostname } from 'node:os';
import { isatty } from 'node:tty';

/** What a destination is, as far as writing to it goes. */
export type DestinationKind = 'pipe' | 'terminal' | 'socket' | 'file';

/**
 * A pipe (or what cannot be told) is what PIPE_BUF is about, and may make a
 * writer wait for its reader; so may a socket, or a terminal (one paused
 * with Ctrl-S waits for ever). A file, or a device such as /dev/null, takes
 * a write into the page cache at once.
 */
export function destinationKind(fd: number): DestinationKind {
  try {
    const stat = fstatSync(fd);
    if (stat.isSocket()) return 'socket';
    if (stat.isFIFO()) return 'pipe';
    return isatty(fd) ? 'terminal' : 'file';
  } catch {
    return 'pipe';
  }
}

/**
 * A second, non-blocking opening of the pipe or terminal `fd` (Linux:
 * through /proc/self/fd), so that `fd` itself keeps the blocking mode others
 * sharing it expect; undefined when it cannot be opened so (a socket,
 * another system).
 */
export function openNonBlocking(fd: number): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFIFO() && !isatty(fd)) return undefined;
    return openSync(`/proc/self/fd/${fd}`, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
}

const NEWLINE = 0x0a;

/** The lines in `bytes` (whole lines). */
export function linesIn(bytes: Buffer): number {
  let n = 0;
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) n++;
  return n;
}

/** The lines in `text` (whole lines). */
export function linesInText(text: string): number {
  let n = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) n++;
  return n;
}

/**
 * `text` (whole lines) in pieces of at most `max` bytes, each ending with a
 * line of its own; a single line longer than that is a piece by itself.
 */
export function pieces(text: string, max: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    // At least `max` / 3 characters fit: no UTF-16 unit takes more than 3 bytes in UTF-8.
    let end = Math.min(text.length, start + Math.floor(max / 3));
    if (end < text.length) {
      const cut = text.lastIndexOf('\n', end - 1);
      end = cut >= start ? cut + 1 : text.indexOf('\n', end) + 1 || text.length;
    }
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/** The warning line, in the log's own shape, that says `dropped` lines were dropped. */
export function droppedNotice(dropped: number): Buffer {
  return Buffer.from(
    `{"level":40,"time":"${new Date().toISOString()}","pid":${process.pid},"hostname":${JSON.stringify(hostname())},"dropped":${dropped},"msg":"log lines dropped: the log could not be written"}\n`,
  );
}
