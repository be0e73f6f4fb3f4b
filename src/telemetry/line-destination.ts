/**
 * @module telemetry/line-destination
 * A log destination over sonic-boom that hands it whole lines in chunks, lets
 * them wait up to a bound while the destination does not take them, counts
 * and tells of those dropped past it, and never waits on its reader.
 * Written against sonic-boom 5.0.2 (pinned in package.json), whose
 * documented options and events do it all; test/platform/sonic-boom.test.ts
 * fails, naming the version, when a release changes them.
 */
import { EventEmitter } from 'node:events';
import { closeSync } from 'node:fs';
import type { DestinationStream } from 'pino';
import SonicBoom from 'sonic-boom';
import { destinationKind, droppedNotice, linesIn, linesInText, openNonBlocking, pieces } from './log-lines';
import { markGathering, writeAtExit } from './destination-registry';
import type { WriteTrouble, WriteTroubleReport } from './write-trouble';

/**
 * Into a pipe, no write is longer than PIPE_BUF (4096 bytes on Linux), so
 * that it reaches the pipe whole, never interleaved with another writer's:
 * lines stay unbroken. A chunk is written once it nears that size.
 */
const PIPE_MAX_WRITE = 4096;
const PIPE_CHUNK_BYTES = PIPE_MAX_WRITE - 512;
/**
 * A file (or /dev/null) takes each write whole: lines wait for a larger
 * chunk there, so that a busy gateway makes a write every few hundred lines
 * rather than every dozen.
 */
const FILE_MAX_WRITE = 64 * 1024;
const FILE_CHUNK_BYTES = 32 * 1024;
/** How often a destination that failed is tried again when no line comes to try it. */
const RETRY_MS = 50;
/** How many times a full pipe is waited for at exit (sonic-boom waits 100 ms each) before the lines left are dropped. */
const EXIT_WRITE_RETRIES = 10;

/** A destination of log lines that counts what it had to drop. */
export interface LogDestination extends DestinationStream, EventEmitter {
  /** `stdout`, `stderr`, `file` or `fd`: the `destination` label of the dropped-lines metric. */
  readonly name: string;
  /** Lines dropped so far: they could not be written, and more than the backlog waited. */
  readonly droppedLines: number;
  /** Writes what waits; `callback` once it is written (or could not be, with the error). */
  flush(callback?: (err?: Error) => void): void;
  /** Writes what waits, on the spot, waiting for a full pipe a bounded time (at exit). */
  flushSync(): void;
  /** Writes what waits, then closes. */
  end(): void;
}

function nameOf(dest: number | string): string {
  if (dest === 1) return 'stdout';
  if (dest === 2) return 'stderr';
  return typeof dest === 'string' ? 'file' : 'fd';
}

/** The {@link LogDestination} that `logDestination` makes: sonic-boom, fed whole lines in chunks. */
export class LineDestination extends EventEmitter implements LogDestination {
  readonly name: string;
  droppedLines = 0;
  private readonly sonic: SonicBoom;
  private readonly pipe: boolean;
  private readonly maxWrite: number;
  /** A descriptor opened here, without blocking, in place of the one given: closed with the destination. */
  private readonly reopened: number | undefined;
  private readonly trouble: WriteTrouble;
  private timer: NodeJS.Timeout | undefined;
  /** The last write failed (a full pipe or disk): what waits is tried again by a timer too. */
  private failing = false;
  /** The trouble of this spell of failing was told. */
  private reported = false;
  /** The reader is gone for good (EPIPE): lines are counted, not kept. */
  private broken = false;
  /** Lines dropped and not yet told of in the log itself. */
  private untold = 0;
  /** Writing the notice of dropped lines: should it be dropped too, it is no line of the caller's. */
  private noticing = false;
  private noticeDropped = false;
  private exitRetries = -1;
  /** Bytes handed to sonic-boom and neither written nor dropped yet. */
  private waiting = 0;
  /** Ended, or closed under it. */
  private closed = false;

  constructor(
    private readonly dest: number | string,
    private readonly flushMs: number,
    backlogBytes: number,
    report: WriteTroubleReport,
  ) {
    super();
    this.name = nameOf(dest);
    const kind = typeof dest === 'number' ? destinationKind(dest) : 'file';
    this.pipe = kind !== 'file';
    this.maxWrite = this.pipe ? PIPE_MAX_WRITE : FILE_MAX_WRITE;
    // A pipe or a terminal is written without blocking, from the event loop,
    // through a second opening of it; a socket (which cannot be opened so)
    // is written off the event loop, on libuv's thread pool.
    this.reopened = typeof dest === 'number' && kind !== 'file' ? openNonBlocking(dest) : undefined;
    const fd = this.reopened ?? dest;
    this.sonic = new SonicBoom({
      ...(typeof fd === 'number' ? { fd } : { dest: fd }),
      sync: kind === 'file' || this.reopened !== undefined,
      contentMode: 'buffer',
      minLength: this.pipe ? PIPE_CHUNK_BYTES : FILE_CHUNK_BYTES,
      maxWrite: this.maxWrite,
      maxLength: backlogBytes,
      // A full pipe is never waited for on the event loop: its lines wait, and a timer tries again.
      retryEAGAIN: () => this.exitRetries > 0 && this.exitRetries-- > 0,
    });
    this.trouble = report(this.name, backlogBytes);
    this.sonic.on('write', (n: number) => this.written(n));
    this.sonic.on('drop', (data: Buffer) => this.dropped(data));
    this.sonic.on('error', (err: NodeJS.ErrnoException) => this.failed(err));
    this.sonic.on('close', () => {
      this.closed = true;
      this.emit('close');
    });
    markGathering(this);
    writeAtExit(this);
  }

  write(text: string): boolean {
    if (this.broken) {
      this.droppedLines += linesInText(text);
      return true;
    }
    // Behind lines dropped, the next line comes after the line that says so, or is dropped too.
    if (!this.tellDropped()) {
      const lines = linesInText(text);
      this.droppedLines += lines;
      this.untold += lines;
      return true;
    }
    if (this.pipe && text.length * 3 > this.maxWrite && Buffer.byteLength(text) > this.maxWrite) {
      // Lines that no write into a pipe holds whole: in pieces of whole lines.
      for (const piece of pieces(text, this.maxWrite)) this.hand(Buffer.from(piece));
    } else {
      this.hand(Buffer.from(text));
    }
    this.arm(this.flushMs);
    return true;
  }

  flush(callback?: (err?: Error) => void): void {
    if (this.closed) {
      if (callback) process.nextTick(callback, new Error('the log destination is closed'));
      return;
    }
    if (this.broken) {
      if (callback) process.nextTick(callback);
      return;
    }
    if (callback === undefined) {
      this.sonic.flush();
      return;
    }
    const done = (err?: Error | null) => {
      // A full pipe: its reader may catch up; tried again until it does, or leaves.
      if (err && (err as NodeJS.ErrnoException).code === 'EAGAIN' && !this.broken && !this.closed) {
        setTimeout(() => this.flush(callback), RETRY_MS).unref();
        return;
      }
      callback(this.broken || !err ? undefined : err);
    };
    this.sonic.flush(done);
  }

  flushSync(): void {
    if (this.broken || this.closed) return;
    this.exitRetries = EXIT_WRITE_RETRIES;
    try {
      this.sonic.flushSync();
    } catch {
      // Nothing more can be written now (a full disk, a reader gone, a pipe full a second long): what waits is dropped.
    } finally {
      this.exitRetries = -1;
    }
  }

  end(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.closed) return;
    this.closed = true;
    if (this.broken) this.sonic.destroy();
    else this.sonic.end();
    // The descriptor given is closed as sonic-boom closes its own: all but standard output and error.
    if (this.reopened !== undefined && this.dest !== 1 && this.dest !== 2) {
      this.sonic.once('close', () => {
        try {
          closeSync(this.dest as number);
        } catch {
          // Closed already by whoever opened it.
        }
      });
    }
  }

  /** Hands `bytes` to sonic-boom, which takes buffers in its `buffer` content mode (its types say strings only). */
  private hand(bytes: Buffer): void {
    this.waiting += bytes.length;
    (this.sonic.write as unknown as (data: Buffer) => boolean).call(this.sonic, bytes);
  }

  /** Lines wait at most `ms` for their chunk; what a failed write left is tried again as soon. */
  private arm(ms: number): void {
    if (this.timer !== undefined || this.waiting === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.closed || this.broken || this.waiting === 0) return;
      this.sonic.flush();
      // Still waiting: a full pipe or disk, or a write under way off the event loop.
      this.arm(RETRY_MS);
    }, ms);
    // The timer never keeps the process alive: what waits is written at exit.
    this.timer.unref();
  }

  private written(n: number): void {
    this.waiting -= n;
    if (n > 0 && this.failing) {
      this.failing = false;
      if (this.reported) this.trouble.resolved(this.droppedLines);
      this.reported = false;
    }
    // Room again: the log itself says how many lines it is missing, after the last it holds.
    if (n > 0) this.tellDropped();
    this.arm(this.flushMs);
    this.emit('write', n);
  }

  /** Hands the line that says how many lines were dropped since the last one; whether none wait to be told of now. */
  private tellDropped(): boolean {
    if (this.untold === 0) return true;
    this.noticing = true;
    this.noticeDropped = false;
    this.hand(droppedNotice(this.untold));
    this.noticing = false;
    if (this.noticeDropped) return false;
    this.untold = 0;
    return true;
  }

  private dropped(data: Buffer): void {
    // The notice itself, dropped: it is tried again with the next room.
    if (this.noticing) {
      this.waiting -= data.length;
      this.noticeDropped = true;
      return;
    }
    this.waiting -= data.length;
    const lines = linesIn(data);
    this.droppedLines += lines;
    this.untold += lines;
  }

  private failed(err: NodeJS.ErrnoException): void {
    if (err.code === 'EPIPE') {
      this.broken = true;
      this.trouble.failed(err, true);
      return;
    }
    this.failing = true;
    // Told once a spell. A full pipe is the reader's pace, not a fault: its lines wait, and are counted if dropped.
    if (err.code !== 'EAGAIN' && !this.reported) {
      this.reported = true;
      this.trouble.failed(err, false);
    }
    this.arm(RETRY_MS);
  }
}
