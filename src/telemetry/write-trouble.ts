/**
 * @module telemetry/write-trouble
 * Telling an operator, once, that a log cannot be written: one line when
 * writing fails, one when it resumes, never one per lost line. The line goes
 * to standard error (standard output's trouble is told there), written
 * without waiting: a standard error that cannot take it either loses it,
 * and the count of dropped lines in the metrics still says it.
 */
import { closeSync, writeSync } from 'node:fs';
import { destinationKind, openNonBlocking } from './log-lines';

/** What a log destination tells of its trouble. */
export interface WriteTrouble {
  /** A write failed: `gone` when the reader left for good (EPIPE). Told once a spell of failing. */
  failed(err: NodeJS.ErrnoException, gone: boolean): void;
  /** A write went through again; `dropped` lines were dropped so far. */
  resolved(dropped: number): void;
}

/** Makes the {@link WriteTrouble} of the destination named `name` (`stdout`, `file`...), whose backlog is `backlogBytes`. */
export type WriteTroubleReport = (name: string, backlogBytes: number) => WriteTrouble;

/** The words for a destination's name. */
function described(name: string): string {
  if (name === 'stdout') return 'standard output';
  if (name === 'stderr') return 'standard error';
  return `the log ${name}`;
}

function mebibytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MiB` : `${Math.round(bytes / 1024)} KiB`;
}

/**
 * Writes `text` to standard error without waiting for it (a pipe or a
 * terminal is opened again without blocking for it); lost when it cannot be
 * written now. A socket, which cannot be opened so, takes the line into
 * its buffer: a line or two in a spell of trouble never fills it.
 */
export function writeToStderrNow(text: string): void {
  const kind = destinationKind(2);
  const fd = kind === 'file' || kind === 'socket' ? 2 : (openNonBlocking(2) ?? 2);
  try {
    writeSync(fd, text);
  } catch {
    // Standard error cannot take it either: the metric says it.
  } finally {
    if (fd !== 2) {
      try {
        closeSync(fd);
      } catch {
        // Nothing to close.
      }
    }
  }
}

/**
 * Tells of a destination's trouble on standard error: its first failure,
 * then its return, with how many lines were lost meanwhile.
 */
export function reportOnStderr(name: string, backlogBytes: number, write = writeToStderrNow): WriteTrouble {
  let droppedBefore = 0;
  const what = described(name);
  return {
    failed(err, gone) {
      const why = `${err.code ?? 'error'}: ${err.message.replace(/^\w+: /, '')}`;
      write(
        gone
          ? `gatehouse: ${what} cannot be written (${why}): its reader is gone, and log lines are dropped and counted in gatehouse_log_lines_dropped_total\n`
          : `gatehouse: ${what} cannot be written (${why}): log lines wait, up to ${mebibytes(backlogBytes)}, then are dropped and counted in gatehouse_log_lines_dropped_total\n`,
      );
    },
    resolved(dropped) {
      write(`gatehouse: ${what} is written again; ${dropped - droppedBefore} log lines were dropped meanwhile\n`);
      droppedBefore = dropped;
    },
  };
}
