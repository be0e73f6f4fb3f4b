/**
 * @module telemetry/log-destination
 * Where the process logger writes: sonic-boom, in chunks of whole lines,
 * never waiting on its reader and never failing the process. A full disk, a
 * reader that stopped or left, a paused terminal: lines wait in memory up to
 * a bound, past it they are dropped and counted, the trouble is reported
 * once (./write-trouble), and writing resumes by itself once it can
 * (./line-destination).
 */
import { LineDestination, type LogDestination } from './line-destination';
import { gathersLines } from './destination-registry';
import { reportOnStderr, type WriteTroubleReport } from './write-trouble';

export { gathersLines } from './destination-registry';
export type { LogDestination } from './line-destination';

/** How long a line may wait for its chunk unless told, in ms. */
export const DEFAULT_LOG_FLUSH_MS = 100;
/** How much may wait for a destination that does not take it before lines are dropped. */
export const DEFAULT_LOG_BACKLOG_BYTES = 8 * 1024 * 1024;

/** Options of {@link logDestination}. */
export interface LogDestinationOptions {
  /** How long a line may wait for its chunk, in ms. Default {@link DEFAULT_LOG_FLUSH_MS}. */
  flushMs?: number;
  /** Bytes that may wait for a destination that does not take them; past it lines are dropped. Default 8 MiB. */
  backlogBytes?: number;
  /** Told once when writing fails and once when it resumes. Default: a line on standard error. */
  report?: WriteTroubleReport;
}

/**
 * A log destination that writes in chunks: a write costs a system call,
 * whether it carries a line or a chunk of them. Lines go out once a chunk
 * waits (3.5 KiB into a pipe or a terminal, 32 KiB into a file) or
 * `flushMs` after the first waiting one, and all of them when the process
 * exits. A file takes each chunk into the page cache at once. A pipe (a
 * container's standard output) or a terminal is written without ever
 * waiting for its reader; a socket is written off the event loop. What a
 * destination does not take waits, up to `backlogBytes`; past it lines
 * are dropped and counted ({@link LogDestination.droppedLines}), and a line
 * in the log says how many once there is room again. `dest` is a file
 * descriptor (default 1, standard output) or a file path.
 */
export function logDestination(dest: number | string = 1, options: LogDestinationOptions = {}): LogDestination {
  return new LineDestination(
    dest,
    options.flushMs ?? DEFAULT_LOG_FLUSH_MS,
    options.backlogBytes ?? DEFAULT_LOG_BACKLOG_BYTES,
    options.report ?? reportOnStderr,
  );
}

/** The lines `destination` dropped so far, when it is a {@link logDestination}. */
export function droppedLinesOf(destination: unknown): { name: string; droppedLines: number } | undefined {
  return gathersLines(destination) ? (destination as LogDestination) : undefined;
}
