/**
 * @module cli/start-workers
 * `gatehouse start --workers <n>`: the workers started and handed to the
 * signals, the start line printed once every one listens. A stop signal
 * while they start gives the start up; workers that keep dying end the
 * process with exit 1.
 */
import type { ResolvedOptions } from '../gatehouse';
import type { Logger } from '../telemetry';
import { startWorkers, type WorkerOptions } from '../workers';
import { bookingsInWords, listeningLine } from './listening-line';
import type { ServerSignals } from './signals';

/** The options a worker can be handed: what only code gives is left out (each worker makes its own). */
function workerOptions(options: ResolvedOptions): WorkerOptions {
  const {
    logger: _logger,
    configSource: _source,
    signal: _signal,
    modules: _modules,
    ports: _ports,
    ...rest
  } = options;
  return rest;
}

/** How many workers, and how each thread's heap is sized. */
export interface WorkerCount {
  readonly count: number;
  /** The young generation of each worker's V8 heap, in MiB. */
  readonly youngGenerationMb: number;
}

/** Runs the gateway on `threads.count` workers; resolves an exit status when it does not serve, `undefined` once it does. */
export async function serveOnWorkers(
  options: ResolvedOptions,
  signals: ServerSignals,
  logger: Logger,
  threads: WorkerCount,
): Promise<number | undefined> {
  const { count } = threads;
  logger.info({ workers: count }, 'starting workers');
  const workers = await startWorkers({
    options: workerOptions(options),
    count,
    logger,
    youngGenerationMb: threads.youngGenerationMb,
  });
  if (signals.stopping.aborted) {
    await workers.stop();
    logger.info('gatehouse stopped');
    return 0;
  }
  signals.serve({
    stop: async () => {
      await workers.stop();
      logger.info('gatehouse stopped');
    },
    reload: () => workers.reload(),
  });
  void workers.ended.then(() => process.exit(1));
  const bookings = bookingsInWords(options, workers.bookings);
  process.stdout.write(listeningLine(options, workers.listening, bookings, count));
  if (workers.bookings === 'opening' || workers.bookings === 'open')
    void workers.bookingsOpen.then(() => {
      if (!signals.stopping.aborted) process.stdout.write(`gatehouse bookings open (${bookings})\n`);
    });
  return undefined;
}
