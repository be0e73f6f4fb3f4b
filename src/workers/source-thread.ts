/**
 * @module workers/source-thread
 * A worker as it starts from the sources (tsx, in development and in the
 * tests): a thread does not inherit the loader of its parent, so it
 * registers tsx before it loads `thread.ts`. Loaded by its path, never
 * imported, so that the compiled package holds neither this file nor tsx.
 */
import { join } from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Starts `thread.ts` beside this file, under tsx. */
export function startSourceThread(options: WorkerOptions): Worker {
  const tsx = require.resolve('tsx/cjs/api');
  const source = `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(join(__dirname, 'thread.ts'))});`;
  return new Worker(source, { ...options, eval: true });
}
