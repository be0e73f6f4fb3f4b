/**
 * @module bookings/database/pglite-thread
 * The thread PGlite runs on, started by ./pglite with the database's folder.
 * Postgres compiled to WebAssembly runs each statement synchronously, and
 * its instance holds about 12 MB of JavaScript heap: on a thread of its own,
 * a slow statement does not hold the event loop that serves every other
 * request, and the main thread's collections do not mark the database's
 * heap. It opens the database, says so, then answers each call in turn.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import type { DurableNodeFS } from './durable-fs';

/** What a call asks of the thread: a statement run, the WAL synced, the database closed. */
export type ThreadWork = { op: 'query'; text: string; params?: readonly unknown[] } | { op: 'flush' } | { op: 'close' };

/** A call to the thread, numbered; its answer carries the number, 0 being the thread's start. */
export type ThreadCall = ThreadWork & { id: number };

/** An error as it crosses to the other thread: its name, message and own plain fields (Postgres's `code`, an errno's `code`...). */
export interface CarriedError {
  name: string;
  message: string;
  fields: Record<string, string | number | boolean>;
}

/** The answer to a call: rows for a query, nothing for the rest, or an error. */
export type ThreadReply = { id: number; rows?: unknown[]; error?: CarriedError };

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

async function serve(folder: string): Promise<void> {
  const port = parentPort!;
  const { PGlite: PGliteClass } = require('@electric-sql/pglite') as typeof import('@electric-sql/pglite');
  const { DurableNodeFS: DurableFS, durableStartParams } = require('./durable-fs') as typeof import('./durable-fs');
  let db: PGlite;
  let fs: DurableNodeFS;
  try {
    fs = new DurableFS(folder);
    db = await PGliteClass.create({ fs, startParams: durableStartParams(PGliteClass.defaultStartParams) });
  } catch (err) {
    port.postMessage({ id: 0, error: carryError(err) } satisfies ThreadReply);
    port.close();
    return;
  }
  port.on('message', (call: ThreadCall) => {
    answer(call).then(
      (rows) => port.postMessage({ id: call.id, rows } satisfies ThreadReply),
      (err: unknown) => port.postMessage({ id: call.id, error: carryError(err) } satisfies ThreadReply),
    );
  });
  port.postMessage({ id: 0 } satisfies ThreadReply);

  async function answer(call: ThreadCall): Promise<unknown[] | undefined> {
    switch (call.op) {
      case 'query':
        return (await db.query(call.text, call.params as unknown[] | undefined)).rows;
      case 'flush':
        await fs.wal.flush();
        return undefined;
      case 'close':
        // Closing checkpoints: the files are whole, and the WAL need not be replayed at the next start.
        await db.close().catch(() => undefined);
        await fs.wal.flush().catch(() => undefined);
        setImmediate(() => port.close());
        return undefined;
    }
  }
}

if (parentPort && (workerData as { pgliteFolder?: unknown } | null)?.pgliteFolder !== undefined) {
  void serve((workerData as { pgliteFolder: string }).pgliteFolder);
}
