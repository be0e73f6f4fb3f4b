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
  /**
   * Resolves with the access lines (`msg: 'request'`) once there are
   * `count` of them. An access line is written after the answer is sent, a
   * turn of the event loop late or at the end of a streamed body: a client
   * holding the answer has not seen it yet, and reads it here.
   */
  requests(count: number): Promise<Array<Record<string, unknown>>>;
  /** Resolves with the access line of the request answered with `X-Request-Id: id`, once it is written. */
  requestLine(id: string | string[] | undefined): Promise<Record<string, unknown>>;
}

const isAccessLine = (line: Record<string, unknown>) => line.msg === 'request';

/** A destination that keeps every line, parsed, and tells who waits for lines when they come. */
export function captureLog(): LogCapture {
  const events = new EventEmitter();
  const raw: string[] = [];
  const lines: Array<Record<string, unknown>> = [];
  function waitForLines(
    count: number,
    select: (line: Record<string, unknown>) => boolean,
  ): Promise<Array<Record<string, unknown>>> {
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
  }
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
    waitForLines,
    requests: (count) => waitForLines(count, isAccessLine),
    async requestLine(id) {
      if (typeof id !== 'string') throw new Error(`not a request id: ${String(id)}`);
      const [line] = await waitForLines(1, (l) => isAccessLine(l) && l.req_id === id);
      return line;
    },
  };
}
