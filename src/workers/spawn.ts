/**
 * @module workers/spawn
 * Starts one worker thread: `thread.js` beside this file in the compiled
 * package, `thread.ts` through tsx from the sources; its young generation
 * sized as asked.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { WorkerStart } from './messages';

/** Starts worker `start.id`, the young generation of its heap `youngGenerationMb` MiB (Node's default when absent). */
export function spawnWorker(start: WorkerStart, youngGenerationMb?: number): Worker {
  const options = {
    workerData: start,
    name: `gatehouse worker ${start.id}`,
    ...(youngGenerationMb === undefined ? {} : { resourceLimits: { maxYoungGenerationSizeMb: youngGenerationMb } }),
  };
  if (__filename.endsWith('.js')) return new Worker(join(__dirname, 'thread.js'), options);
  // By its path, untyped: an import would compile it, and tsx with it, into the package.
  const source = require(join(__dirname, 'source-thread')) as {
    startSourceThread(o: typeof options): Worker;
  };
  return source.startSourceThread(options);
}
