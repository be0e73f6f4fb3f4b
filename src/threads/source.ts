/**
 * @module threads/source
 * A thread as it starts from the sources: a worker does not inherit the
 * loader of its parent, so it registers tsx before it loads the module.
 * Loaded by its path, never imported, so that the compiled package holds
 * neither this file nor tsx.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Starts the TypeScript module at `file` on a thread of its own, under tsx. */
export function startSourceThread(file: string, options: WorkerOptions): Worker {
  const tsx = require.resolve('tsx/cjs/api');
  const source = `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(file)});`;
  return new Worker(source, { ...options, eval: true });
}
