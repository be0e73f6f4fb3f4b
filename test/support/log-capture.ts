/**
 * @module test/support/log-capture
 * A pino destination that keeps the lines written to it, for assertions.
 */
import { EventEmitter } from 'node:events';

export interface LogCapture {
  /** The raw lines, as written. */
  readonly raw: string[];
  /** The lines, parsed. */
  readonly lines: Array<Record<string, unknown>>;
  write(chunk: string): void;
  /** Resolves once `count` lines have been written. */
  waitFor(count: number): Promise<Array<Record<string, unknown>>>;
  /** Resolves with the lines `select` keeps once there are `count` of them (access lines come a turn of the event loop late). */
  waitForLines(
    count: number,
    select: (line: Record<string, unknown>) => boolean,
  ): Promise<Array<Record<string, unknown>>>;
}

export function captureLog(): LogCapture {
  const events = new EventEmitter();
  const raw: string[] = [];
  const lines: Array<Record<string, unknown>> = [];
  return {
    raw,
    lines,
    write(chunk) {
      for (const line of chunk.split('\n')) {
        if (!line) continue;
        raw.push(line);
        lines.push(JSON.parse(line));
      }
      events.emit('line');
    },
    waitFor(count) {
      return new Promise((resolve) => {
        const check = () => {
          if (lines.length < count) return;
          events.off('line', check);
          resolve(lines);
        };
        events.on('line', check);
        check();
      });
    },
    waitForLines(count, select) {
      return new Promise((resolve) => {
        const check = () => {
          const selected = lines.filter(select);
          if (selected.length < count) return;
          events.off('line', check);
          resolve(selected);
        };
        events.on('line', check);
        check();
      });
    },
  };
}
