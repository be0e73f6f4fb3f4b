/**
 * @module workers/spawn
 * Starts one worker thread (./thread), its young generation sized as
 * asked.
 */
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startThread } from '../threads';
import type { WorkerStart } from './messages';

/** Starts worker `start.id`, the young generation of its heap `youngGenerationMb` MiB (Node's default when absent). */
export function spawnWorker(start: WorkerStart, youngGenerationMb?: number): Worker {
  const options = {
    workerData: start,
    name: `gatehouse worker ${start.id}`,
    ...(youngGenerationMb === undefined ? {} : { resourceLimits: { maxYoungGenerationSizeMb: youngGenerationMb } }),
  };
  return startThread(join(__dirname, 'thread'), options);
}
