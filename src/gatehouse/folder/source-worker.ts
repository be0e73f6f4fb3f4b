/**
 * @module gatehouse/folder/source-worker
 * The checking thread as it starts from the sources (tsx, in development
 * and in the tests): a worker does not inherit the loader of its parent, so
 * it registers tsx before it loads `worker.ts`. Loaded by its path, never
 * imported, so that the compiled package, which runs `worker.js` and has no
 * tsx, holds neither this file nor a reference to tsx.
 */
import { join } from 'node:path';
import { Worker, type ResourceLimits } from 'node:worker_threads';

/** Starts `worker.ts` beside this file on a thread of its own, under tsx, within `resourceLimits`. */
export function startSourceWorker(resourceLimits?: ResourceLimits): Worker {
  const tsx = require.resolve('tsx/cjs/api');
  const source = `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(join(__dirname, 'worker.ts'))});`;
  return new Worker(source, { eval: true, resourceLimits });
}
