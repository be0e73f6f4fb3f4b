/**
 * @module telemetry/pipe-writer
 * Writes into a pipe (a container's standard output, `gatehouse start |
 * shipper`) from the event loop without ever waiting on the reader: each
 * chunk goes out in one non-blocking write, and what the pipe cannot take
 * now waits in memory, up to a bound, for a timer to try again. Past the
 * bound, lines are dropped and counted, and a line says so once the pipe
 * takes lines again: a log that cannot keep up costs lines, never the
 * gateway's memory or its answers.
 */
import { constants, fstatSync, openSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';

/** How much may wait for a full pipe before lines are dropped. */
export const DEFAULT_PIPE_BACKLOG_BYTES = 8 * 1024 * 1024;
/** How soon a full pipe is tried again. */
const RETRY_MS = 5;
/** How many times a full pipe is waited for at exit, 10 ms each, before the lines left are dropped. */
export const EXIT_WRITE_RETRIES = 100;

/** Waits the 10 ms of one such retry, on the spot: at exit there is no event loop to wait in. */
export function waitForFullPipe(): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
}

const NEWLINE = 0x0a;

/** Writes chunks of whole lines into a pipe; see the module comment. */
export interface PipeWriter {
  /** Writes `bytes` now, or queues them; whether nothing waits afterwards. */
  write(bytes: Buffer): boolean;
  /** Calls `done` once nothing waits (at once when nothing does). */
  whenEmpty(done: () => void): void;
  /** Writes what waits, waiting for the pipe a bounded time (at exit). */
  drainSync(): void;
  /** Stops trying again; the descriptor is closed by whoever holds it. */
  stop(): void;
}

/**
 * A second, non-blocking opening of the pipe `fd` is (Linux: through
 * /proc/self/fd), so that `fd` itself keeps the blocking mode others sharing
 * it expect; undefined when `fd` is no pipe or cannot be opened so (a
 * socket, another system).
 */
export function openPipeNonBlocking(fd: number): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    if (!fstatSync(fd).isFIFO()) return undefined;
    return openSync(`/proc/self/fd/${fd}`, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
}

/** The lines in `bytes` (whole lines). */
export function linesIn(bytes: Buffer): number {
  let n = 0;
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) n++;
  return n;
}

/** The warning line that says `dropped` lines were dropped. */
export function droppedNotice(dropped: number): Buffer {
  return Buffer.from(
    `{"level":40,"time":"${new Date().toISOString()}","pid":${process.pid},"hostname":${JSON.stringify(hostname())},"dropped":${dropped},"msg":"log lines dropped: the reader of the log did not keep up"}\n`,
  );
}

/**
 * A writer into the non-blocking pipe `fd` (from {@link openPipeNonBlocking}).
 * `written(n)` is told of every write that went out, as sonic-boom's `write`
 * event is.
 */
export function pipeWriter(
  fd: number,
  written: (n: number) => void,
  maxBacklog: number = DEFAULT_PIPE_BACKLOG_BYTES,
): PipeWriter {
  const queue: Buffer[] = [];
  let waiting = 0;
  let dropped = 0;
  let broken = false;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let emptied: (() => void)[] = [];

  /** Writes the head of the queue; whether all of it went out (false: the pipe is full). */
  function writeHead(): boolean {
    const head = queue[0];
    let n: number;
    try {
      n = writeSync(fd, head);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return false;
      // The reader is gone (EPIPE) or the pipe unusable: nothing more can be written, so nothing is kept,
      // nor a count of lines no one will be told of.
      broken = true;
      queue.length = 0;
      waiting = 0;
      dropped = 0;
      return true;
    }
    written(n);
    waiting -= n;
    // Up to PIPE_BUF bytes go whole or not at all; only a longer single line is written in parts.
    if (n < head.length) {
      queue[0] = head.subarray(n);
      return false;
    }
    queue.shift();
    return true;
  }

  function writeQueued(): void {
    while (queue.length > 0 && writeHead());
    if (queue.length > 0) return;
    if (dropped > 0) {
      const notice = droppedNotice(dropped);
      dropped = 0;
      enqueue(notice);
      while (queue.length > 0 && writeHead());
      if (queue.length > 0) return;
    }
    const done = emptied;
    emptied = [];
    for (const callback of done) callback();
  }

  function retry(): void {
    timer = undefined;
    writeQueued();
    if (queue.length > 0) arm();
  }

  function arm(): void {
    if (timer !== undefined || closed) return;
    timer = setTimeout(retry, RETRY_MS);
    // A full pipe never keeps the process alive: what waits is written at exit, as far as it can be.
    timer.unref();
  }

  function enqueue(bytes: Buffer): void {
    queue.push(bytes);
    waiting += bytes.length;
  }

  return {
    write(bytes) {
      if (broken || closed || bytes.length === 0) return true;
      // Behind a full pipe, past the bound, a chunk is dropped; a chunk alone always gets its try.
      if (queue.length > 0 && waiting + bytes.length > maxBacklog) dropped += linesIn(bytes);
      else enqueue(bytes);
      // The reader may have caught up since the last try: one write finds out.
      writeQueued();
      if (queue.length === 0) return true;
      arm();
      return false;
    },
    whenEmpty(done) {
      if (queue.length === 0 && dropped === 0) done();
      else emptied.push(done);
    },
    drainSync() {
      let retries = 0;
      while (queue.length > 0 && !broken) {
        if (writeHead()) continue;
        if (++retries > EXIT_WRITE_RETRIES) break;
        waitForFullPipe();
      }
    },
    stop() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
