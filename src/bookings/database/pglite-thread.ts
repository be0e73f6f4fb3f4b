/**
 * @module bookings/database/pglite-thread
 * The thread PGlite runs on, started by ./pglite with the database's folder
 * and start parameters. Postgres compiled to WebAssembly runs each
 * statement synchronously: on a thread of its own, a slow statement does
 * not hold the event loop that serves every other request, and the main
 * thread's collections do not mark the database's heap.
 *
 * A folder with no database yet gets the ready-made one (./template), then
 * the database opens, the thread says so, and it answers calls: from the
 * thread that started it, and from any thread handed a MessagePort to it
 * (`connect`), so that several threads can share the one database. PGlite
 * is one connection: a session (from its first statement to its `end`)
 * holds it, and the sessions of every caller take turns here, in the order
 * they asked.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
// Not the index of platform: it would load pino, and more, into a thread that logs nothing.
import { compiledBaselineOnly } from '../../platform/v8-wasm';
import { undiciParserWasm } from '../../platform/undici';
import type { DurableNodeFS } from './durable-fs';

/**
 * What a call asks of the thread: a statement run in a session (the first
 * one `begin`s it: it waits until the session holds the database, and is
 * not run if that is later than `until`, a time of `Date.now()`), a
 * session ended, the WAL synced, another caller served on `port`, the
 * database closed.
 */
export type ThreadWork =
  | { op: 'query'; session: number; begin?: { until: number }; text: string; params?: readonly unknown[] }
  | { op: 'end'; session: number }
  | { op: 'flush' }
  | { op: 'connect'; port: MessagePort }
  | { op: 'close' };

/** A call to the thread, numbered by its caller; its answer carries the number, 0 being the thread's start. */
export type ThreadCall = ThreadWork & { id: number };

/** An error as it crosses to the other thread: its name, message and own plain fields (Postgres's `code`, an errno's `code`...). */
export interface CarriedError {
  name: string;
  message: string;
  fields: Record<string, string | number | boolean>;
}

/** The answer to a call: rows for a query, nothing for the rest, or an error. */
export type ThreadReply = { id: number; rows?: unknown[]; error?: CarriedError };

/** What the thread is started with. */
export interface ThreadData {
  /** The folder of the database's files. */
  pgliteFolder: string;
  /** Postgres's start parameters (see ./pglite-settings). */
  startParams: readonly string[];
  /** Whether V8 compiles PGlite's WebAssembly with its baseline compiler only (see platform/v8-wasm). */
  baselineWasm: boolean;
}

/** `err` in a form that can be posted to the other thread. */
export function carryError(err: unknown): CarriedError {
  const e = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as Record<string, unknown>;
  const fields: CarriedError['fields'] = {};
  for (const [key, value] of Object.entries(e)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  }
  return {
    name: typeof e.name === 'string' ? e.name : 'Error',
    message: typeof e.message === 'string' ? e.message : String(err),
    fields,
  };
}

/** The error `carried` stood for, rebuilt on this thread. */
export function rebuildError(carried: CarriedError): Error {
  const err = Object.assign(new Error(carried.message), carried.fields);
  err.name = carried.name;
  return err;
}

/** Where calls come from and answers go: the thread's parent, or a port handed over by `connect`. */
export type Caller = Pick<MessagePort, 'postMessage' | 'on' | 'close'>;

/** The one connection, held by one session at a time; the others wait in the order they asked. */
export function sessionTurns() {
  let holder: { caller: Caller; session: number } | undefined;
  const waiting: { caller: Caller; session: number; granted: () => void }[] = [];
  const next = () => {
    holder = undefined;
    const first = waiting.shift();
    if (first) {
      holder = { caller: first.caller, session: first.session };
      first.granted();
    }
  };
  return {
    begin(caller: Caller, session: number): Promise<void> {
      return new Promise((granted) => {
        waiting.push({ caller, session, granted });
        if (holder === undefined) next();
      });
    },
    holds(caller: Caller, session: number): boolean {
      return holder?.caller === caller && holder.session === session;
    },
    end(caller: Caller, session: number): void {
      if (this.holds(caller, session)) next();
    },
    /** A caller gone (its thread ended): its turn is given up, and its place in the queue. */
    leave(caller: Caller): void {
      for (let i = waiting.length - 1; i >= 0; i--) if (waiting[i].caller === caller) waiting.splice(i, 1);
      if (holder?.caller === caller) next();
    },
  };
}

async function serve(data: ThreadData): Promise<void> {
  const parent = parentPort!;
  const { PGlite: PGliteClass } = require('@electric-sql/pglite') as typeof import('@electric-sql/pglite');
  const { DurableNodeFS: DurableFS, durableStartParams } = require('./durable-fs') as typeof import('./durable-fs');
  const template = require('./template') as typeof import('./template');
  let db: PGlite;
  let fs: DurableNodeFS;
  try {
    if (!template.holdsDatabase(data.pgliteFolder))
      await template.installTemplate(await template.templateFile(), data.pgliteFolder);
    fs = new DurableFS(data.pgliteFolder);
    const create = () =>
      PGliteClass.create({
        fs,
        startParams: [...durableStartParams(PGliteClass.defaultStartParams), ...data.startParams],
      });
    db = data.baselineWasm ? await compiledBaselineOnly(create, undiciParserWasm()) : await create();
  } catch (err) {
    parent.postMessage({ id: 0, error: carryError(err) } satisfies ThreadReply);
    parent.close();
    return;
  }
  const turns = sessionTurns();
  let closed = false;

  async function answer(caller: Caller, call: ThreadCall): Promise<unknown[] | undefined> {
    switch (call.op) {
      case 'end':
        turns.end(caller, call.session);
        return undefined;
      case 'query':
        if (call.begin) {
          await turns.begin(caller, call.session);
          // Its caller has answered already: what had not begun by its deadline never does.
          if (Date.now() > call.begin.until) {
            turns.end(caller, call.session);
            throw new Error('the session waited past its deadline for the database');
          }
        }
        if (!turns.holds(caller, call.session))
          throw new Error('a statement outside the session that holds the database');
        return (await db.query(call.text, call.params as unknown[] | undefined)).rows;
      case 'flush':
        await fs.wal.flush();
        return undefined;
      case 'connect':
        listen(call.port);
        return undefined;
      case 'close':
        if (caller !== parent) throw new Error('only the thread that started the database closes it');
        closed = true;
        // Closing checkpoints: the files are whole, and the WAL need not be replayed at the next start.
        await db.close().catch(() => undefined);
        await fs.wal.flush().catch(() => undefined);
        setImmediate(() => parent.close());
        return undefined;
    }
  }

  function listen(caller: Caller): void {
    caller.on('message', (call: ThreadCall) => {
      const reply = (message: ThreadReply) => {
        if (!closed || caller === parent) caller.postMessage(message);
      };
      answer(caller, call).then(
        (rows) => reply({ id: call.id, rows }),
        (err: unknown) => reply({ id: call.id, error: carryError(err) }),
      );
    });
    if (caller !== parent) caller.on('close', () => turns.leave(caller));
  }

  listen(parent);
  parent.postMessage({ id: 0 } satisfies ThreadReply);
}

if (parentPort && (workerData as Partial<ThreadData> | null)?.pgliteFolder !== undefined) {
  void serve(workerData as ThreadData);
}
