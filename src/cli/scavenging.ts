/**
 * @module cli/scavenging
 * How a server command has V8 collect its young generation: with V8's
 * helper threads, or on the thread that allocated alone where the process
 * may use one CPU, on which the helpers could only take turns with the
 * thread that serves (`--parallel-scavenge`).
 */
import { availableParallelism } from 'node:os';
import { scavengeFlagsGiven, scavengeInParallel } from '../platform/v8-young';
import type { Logger } from '../telemetry/logger';

/** `--parallel-scavenge`, `PARALLEL_SCAVENGE`. */
export type ParallelScavenge = 'auto' | 'on' | 'off';

/**
 * Turns V8's helper threads off for scavenges as `setting` asks (`auto`:
 * where `os.availableParallelism()` is 1), unless node was told how to
 * scavenge; says so in a debug line.
 */
export function chooseScavenging(setting: ParallelScavenge, logger: Logger): void {
  if (scavengeFlagsGiven()) return;
  const cpus = availableParallelism();
  if (setting === 'on' || (setting === 'auto' && cpus > 1)) return;
  scavengeInParallel(false);
  logger.debug({ cpus, parallelScavenge: setting }, 'V8 scavenges on the thread that allocated alone');
}
