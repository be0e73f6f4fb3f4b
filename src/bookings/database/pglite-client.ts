/**
 * @module bookings/database/pglite-client
 * Calls to the PGlite thread (./pglite-thread) over whatever carries
 * messages to it: the Worker that started it, or a MessagePort it was
 * handed (`connect`), so that any thread can be a caller. Each call is
 * numbered and answered by number; a carrier that closes fails what is
 * still waiting as an outage.
 */
import type { MessagePort, Worker } from 'node:worker_threads';
import { DatabaseUnavailableError, errorText } from './errors';
import { rebuildError, type ThreadCall, type ThreadReply, type ThreadWork } from './pglite-thread';

/** What carries the calls: a Worker or a MessagePort. */
export type Carrier = Pick<Worker | MessagePort, 'postMessage' | 'ref' | 'unref'> & {
  on(event: 'message', listener: (reply: ThreadReply) => void): unknown;
};

/** The severities after which Postgres stops the server (or the session, which is the whole of PGlite). */
const ENDS_THE_DATABASE = new Set(['PANIC', 'FATAL']);

/** Calls to a PGlite thread. */
export interface ThreadClient {
  /** Posts `work` and resolves its rows (a query) or nothing; rejects with the thread's error, or an outage once the thread stopped. */
  call(work: ThreadWork): Promise<unknown[] | undefined>;
  /**
   * Fails every call waiting, and every later one, as an outage: the
   * carrier closed (`why`, the thread's exit or fault).
   */
  stopped(why: string, cause?: unknown): void;
  /** The thread's start: resolves once its database is open, rejects with why it could not open it. */
  readonly started: Promise<void>;
}

interface Waiter {
  resolve(rows: unknown[] | undefined): void;
  reject(err: Error): void;
}

/**
 * A client over `carrier`. The carrier keeps the process alive only while
 * a call is under way. `onFatal` hears a PANIC or FATAL: after one,
 * Postgres would restart, and this instance answers nothing more.
 * `starting`: the thread has yet to say its database is open (a Worker just
 * started); a port is handed over once it is.
 */
export function threadClient(carrier: Carrier, onFatal: () => void, starting = true): ThreadClient {
  const waiting = new Map<number, Waiter>();
  let lastId = 0;
  let stoppedWith: Error | undefined;
  let started!: Waiter;
  const startedPromise = new Promise<void>((resolve, reject) => {
    started = { resolve: () => resolve(), reject };
  });
  if (starting) waiting.set(0, started);
  else {
    started.resolve(undefined);
    carrier.unref();
  }
  carrier.on('message', (reply: ThreadReply) => {
    const waiter = waiting.get(reply.id);
    if (waiter === undefined) return;
    waiting.delete(reply.id);
    if (waiting.size === 0) carrier.unref();
    if (reply.error !== undefined) waiter.reject(rebuildError(reply.error));
    else waiter.resolve(reply.rows);
    if (reply.error !== undefined && ENDS_THE_DATABASE.has(String(reply.error.fields.severity))) onFatal();
  });
  return {
    started: startedPromise,
    call(work) {
      if (stoppedWith) return Promise.reject(stoppedWith);
      const id = ++lastId;
      if (waiting.size === 0) carrier.ref();
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        const call: ThreadCall = { ...work, id };
        if (work.op === 'connect') carrier.postMessage(call, [work.port]);
        else carrier.postMessage(call);
      });
    },
    stopped(why, cause) {
      stoppedWith ??= new DatabaseUnavailableError('unavailable', `the PGlite thread stopped: ${why}`, { cause });
      for (const waiter of waiting.values()) waiter.reject(stoppedWith);
      waiting.clear();
    },
  };
}

/** The text of a thread's end: its fault, or its exit code. */
export function threadEnd(code: number, failure: unknown): string {
  return failure ? errorText(failure) : `exit code ${code}`;
}
