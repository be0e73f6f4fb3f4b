/**
 * @module workers
 * A gateway served by several worker threads on the same ports (reusePort),
 * as one gateway: shared counters, one bookings database, one config, one
 * metrics endpoint, one stop. `gatehouse start --workers` runs it.
 */
export { startWorkers, type Workers, type WorkersOptions } from './supervisor';
export type { WorkerOptions } from './messages';
export { CRASH_LIMIT, CRASH_WINDOW_MS } from './restarts';
