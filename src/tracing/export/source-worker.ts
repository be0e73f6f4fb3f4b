/**
 * @module tracing/export/source-worker
 * The export thread as it starts from the sources (tsx, in development and
 * in the tests): a worker does not inherit the loader of its parent, so it
 * registers tsx before it loads `worker.ts`. Loaded by its path, never
 * imported, so that the compiled package holds neither this file nor tsx.
 */
import { join } from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Starts `worker.ts` beside this file on a thread of its own, under tsx. */
export function startSourceWorker(options: WorkerOptions): Worker {
  const tsx = require.resolve('tsx/cjs/api');
  const source = `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(join(__dirname, 'worker.ts'))});`;
  return new Worker(source, { ...options, eval: true });
}
