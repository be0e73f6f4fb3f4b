/**
 * @module telemetry/log-destination
 * Where the process logger writes: sonic-boom, handed whole chunks of lines
 * already in UTF-8. Each line is encoded once, into the chunk it goes out
 * in; given strings instead, sonic-boom measured a chunk's UTF-8 length on
 * every write, encoded it to write it, and encoded it again once written to
 * cut off what was written.
 */
import { closeSync, fstatSync, writeSync } from 'node:fs';
import { isatty } from 'node:tty';
import pino, { type DestinationStream } from 'pino';
import {
  DEFAULT_PIPE_BACKLOG_BYTES,
  droppedNotice,
  EXIT_WRITE_RETRIES,
  linesIn,
  openPipeNonBlocking,
  pipeWriter,
  waitForFullPipe,
  type PipeWriter,
} from './pipe-writer';

/**
 * Into a pipe, no write is longer than PIPE_BUF (4096 bytes on Linux), so
 * that it reaches the pipe whole, never interleaved with another writer's:
 * lines stay unbroken. A chunk is written once it nears that size.
 */
const PIPE_MAX_WRITE = 4096;
const PIPE_CHUNK_BYTES = PIPE_MAX_WRITE - 512;
/**
 * A file (or /dev/null, or a terminal) takes each write whole: lines wait for
 * a larger chunk there, so that a busy gateway makes a write every few
 * hundred lines rather than every dozen.
 */
const FILE_MAX_WRITE = 64 * 1024;
const FILE_CHUNK_BYTES = 32 * 1024;
export const DEFAULT_LOG_FLUSH_MS = 100;
const NOTHING = Buffer.alloc(0);

/** Destinations made here: a writer may hand them one line at a time, since they gather lines themselves. */
const gathering = new WeakSet<object>();

/**
 * The file destinations whose lines are written at exit here: pino's own
 * exit hook is only for those it writes asynchronously, and a file's are
 * written synchronously (sonic-boom's `sync`), while the chunk gathered
 * here would wait for its timer. Held weakly: a destination dropped is not
 * kept for the hook.
 */
const writtenAtExit = new Set<WeakRef<{ flushSync(): void }>>();
let exitHooked = false;

function writeAtExit(stream: { flushSync(): void }): void {
  for (const ref of writtenAtExit) if (ref.deref() === undefined) writtenAtExit.delete(ref);
  writtenAtExit.add(new WeakRef(stream));
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', () => {
    for (const ref of writtenAtExit) ref.deref()?.flushSync();
  });
}

/** Whether `stream` is a {@link logDestination}, which gathers the lines it is given into chunks itself. */
export function gathersLines(stream: unknown): boolean {
  return typeof stream === 'object' && stream !== null && gathering.has(stream);
}

/** What a destination is, as far as writing to it goes. */
type Kind = 'pipe' | 'terminal' | 'file';

/**
 * A pipe or a socket (or what cannot be told) is what PIPE_BUF is about, and
 * may make a writer wait for its reader; so may a terminal (one paused with
 * Ctrl-S waits for ever). A file, or a device such as /dev/null, takes a
 * write into the page cache at once.
 */
function kindOf(fd: number): Kind {
  try {
    const stat = fstatSync(fd);
    if (stat.isFIFO() || stat.isSocket()) return 'pipe';
    return isatty(fd) ? 'terminal' : 'file';
  } catch {
    return 'pipe';
  }
}

/**
 * `text` (whole lines) in pieces of at most `max` bytes, each ending with a
 * line of its own; a single line longer than that is a piece by itself.
 */
function pieces(text: string, max: number): string[] {
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

/** What sonic-boom (buffer mode) holds of the lines not yet written. */
interface PendingChunks {
  fd: number;
  destroyed: boolean;
  _writing: boolean;
  _writingBuf: Buffer;
  _bufs: Buffer[][];
  _lens: number[];
  _len: number;
}

/**
 * A log destination that writes in chunks: a write costs a system call, and
 * into a pipe or a terminal a trip through libuv's thread pool besides (tens
 * of µs of CPU under load, a thread woken on the gateway's CPU), whether it
 * carries a line or a chunk of them. Lines go out once a chunk waits (3.5
 * KiB into a pipe, 32 KiB into a file) or `flushMs` after the first waiting
 * one, whichever comes first, and all of them when the process exits. Into
 * a file (or /dev/null) a chunk is written at once, as nginx writes its
 * access log: the page cache takes it without a wait. A pipe (a container's
 * standard output) is written from the event loop without waiting: one
 * non-blocking write a chunk, and what a full pipe cannot take waits, up to
 * `pipeBacklogBytes` (8 MiB), then is dropped and counted (./pipe-writer);
 * through the thread pool, one chunk in flight waited for a thread on a busy
 * CPU, and under load the lines piled up in memory without bound. A socket
 * or a terminal (one paused with Ctrl-S waits for ever) is written off the
 * event loop, with the same bound on what waits. `dest` is a file
 * descriptor (default 1, standard output) or a file path.
 */
export function logDestination(
  dest: number | string = 1,
  flushMs: number = DEFAULT_LOG_FLUSH_MS,
  pipeBacklogBytes: number = DEFAULT_PIPE_BACKLOG_BYTES,
): DestinationStream {
  const kind: Kind = typeof dest === 'number' ? kindOf(dest) : 'file';
  const pipe = kind === 'pipe';
  const maxWrite = pipe ? PIPE_MAX_WRITE : FILE_MAX_WRITE;
  const chunkBytes = pipe ? PIPE_CHUNK_BYTES : FILE_CHUNK_BYTES;
  // It writes each chunk it is handed at once (minLength 0), and holds it
  // while an asynchronous write is under way. A pipe is written from here,
  // never waiting on its reader (./pipe-writer): sonic-boom, given the
  // descriptor, only closes it. A socket, or a pipe that cannot be opened
  // so, is written off the event loop.
  const nonBlocking = pipe && typeof dest === 'number' ? openPipeNonBlocking(dest) : undefined;
  const stream = pino.destination({
    dest: nonBlocking ?? dest,
    sync: kind === 'file' || nonBlocking !== undefined,
    minLength: 0,
    maxWrite,
    contentMode: 'buffer',
  });
  const state = stream as unknown as PendingChunks;
  const direct: PipeWriter | undefined =
    nonBlocking === undefined ? undefined : pipeWriter(nonBlocking, (n) => stream.emit('write', n), pipeBacklogBytes);
  const handedOn = stream.write.bind(stream) as unknown as (bytes: Buffer) => boolean;
  // What waits for a socket or a terminal (one paused with Ctrl-S) is bounded
  // as a pipe's backlog is: past it, lines are dropped, and counted in a line
  // once there is room again. A file takes each chunk at once.
  let dropped = 0;
  function bounded(bytes: Buffer): boolean {
    if (state._len + bytes.length > pipeBacklogBytes) {
      dropped += linesIn(bytes);
      return false;
    }
    if (dropped > 0) {
      handedOn(droppedNotice(dropped));
      dropped = 0;
    }
    return handedOn(bytes);
  }
  const write = direct ? (bytes: Buffer) => direct.write(bytes) : kind === 'file' ? handedOn : bounded;
  // The chunk being filled: handed over as it is, then a new one is taken.
  let chunk = Buffer.allocUnsafe(maxWrite);
  let used = 0;
  let ok = true;

  function handOver(): void {
    if (used === 0) return;
    const bytes = chunk.subarray(0, used);
    chunk = Buffer.allocUnsafe(maxWrite);
    used = 0;
    ok = write(bytes);
  }

  /** Adds `lines` (whole lines) to the chunk, handing it over first when they do not fit. */
  function add(lines: string): void {
    // No UTF-16 unit takes more than 3 bytes: the exact length is asked only when that bound does not fit.
    if (used + lines.length * 3 > maxWrite) {
      const bytes = Buffer.byteLength(lines);
      if (used + bytes > maxWrite) handOver();
      if (bytes > maxWrite) {
        // Lines that no chunk holds: into a pipe, in pieces of whole lines.
        for (const piece of pipe ? pieces(lines, maxWrite) : [lines]) ok = write(Buffer.from(piece));
        return;
      }
    }
    used += chunk.write(lines, used);
  }

  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(flush, flushMs);
    // The timer never keeps the process alive: pino writes what waits at exit.
    timer.unref();
  };
  function flush(): void {
    timer = undefined;
    // During a write, sonic-boom keeps what it is handed and writes it next.
    if (!state.destroyed) handOver();
  }
  (stream as { write(lines: string): boolean }).write = (lines: string) => {
    // A closed destination answers as sonic-boom does.
    if (state.destroyed) return write(Buffer.from(lines));
    add(lines);
    if (used >= chunkBytes) handOver();
    if (timer === undefined) arm();
    return ok;
  };
  // pino's logger.flush(callback): what waits here is written, and the
  // callback told once it is (sonic-boom, given whole chunks, would call it at once).
  const ownFlush = stream.flush.bind(stream);
  stream.flush = (callback?: (err?: Error) => unknown) => {
    if (state.destroyed) return ownFlush(callback);
    // A file still being opened: its lines are written once it is, and the flush then.
    if (state.fd < 0) {
      stream.once('ready', () => stream.flush(callback));
      return;
    }
    handOver();
    if (callback === undefined) return;
    if (direct) direct.whenEmpty(() => process.nextTick(callback));
    else if (state._writing) stream.once('drain', () => callback());
    else process.nextTick(callback);
  };
  const ownEnd = stream.end.bind(stream);
  stream.end = () => {
    handOver();
    direct?.drainSync();
    direct?.stop();
    ownEnd();
    // The descriptor given is closed as sonic-boom closes its own: all but standard output and error.
    if (direct && dest !== 1 && dest !== 2) {
      stream.once('close', () => {
        try {
          closeSync(dest as number);
        } catch {
          // Closed already by whoever opened it.
        }
      });
    }
  };
  const ownFlushSync = stream.flushSync.bind(stream);
  stream.flushSync = () => {
    // A file never opened (still opening at exit, or refused) takes nothing.
    if (state.fd < 0) return;
    handOver();
    if (direct) return direct.drainSync();
    // Another sonic-boom may keep its lines otherwise: then its own flush it is.
    if (Array.isArray(state._bufs) && Array.isArray(state._lens) && Buffer.isBuffer(state._writingBuf))
      flushPendingSync(state);
    else ownFlushSync();
  };
  gathering.add(stream);
  if (kind === 'file' || direct) writeAtExit(stream);
  return stream;
}

/**
 * Writes what waits, at exit (pino calls it from its `exit` hook). sonic-boom's
 * own flushSync retries every failed write but EAGAIN forever, 100 ms apart:
 * once the reader of standard output is gone (`gatehouse start | head`, a log
 * collector that died), a write fails with EPIPE and the process would never
 * end, deaf to any further signal. Here a write that fails otherwise than
 * EAGAIN drops the lines left, and a pipe that stays full is given up on.
 */
function flushPendingSync(s: PendingChunks): void {
  if (s.destroyed || s.fd < 0) return;
  // A chunk under an async write is the write's: sonic-boom leaves it too.
  const waiting = s._bufs.flat();
  const chunks = s._writing ? waiting : [s._writingBuf, ...waiting];
  s._bufs = [];
  s._lens = [];
  if (!s._writing) s._writingBuf = NOTHING;
  s._len = 0;
  let retries = 0;
  for (const chunk of chunks) {
    let rest = chunk;
    while (rest.length > 0) {
      try {
        rest = rest.subarray(writeSync(s.fd, rest));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || ++retries > EXIT_WRITE_RETRIES) return;
        waitForFullPipe();
      }
    }
  }
}
