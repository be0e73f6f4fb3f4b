/**
 * @module cli/start-command
 * `gatehouse start`: the whole gateway from a config folder. Its ports are
 * bound first, so that a port in use is said before a first start makes
 * its data folder; a stop signal while it starts gives the start up at its
 * next step, closes what it opened, and exits 0. It serves as soon as it
 * listens; the bookings database opens meanwhile, and a second line says
 * when it is open.
 */
import {
  DEFAULT_YOUNG_GENERATION_MB,
  libraryName,
  OPTION_NAMES,
  tlsPair,
  type GatehouseOptions,
  type ResolvedOptions,
} from '../gatehouse/options';
import type { Logger } from '../telemetry';
import { availableParallelism } from 'node:os';
import { supportsReusePort } from '../ports';
import { keepYoungGenerationAt, releaseYoungGeneration, youngGenerationFlagsGiven } from '../platform/v8-young';
import { parseCommandLine, readCommandOptions, UsageError } from './command-line';
import { print } from './output';
import { chooseScavenging, type ParallelScavenge } from './scavenging';
import type { ServerSignals } from './signals';
import { startUsage } from './usage';

type GatehouseModule = typeof import('../gatehouse');
// Not the telemetry index: the main thread of workers holds a logger, and loads no more of the gateway than it holds.
type LoggerModule = typeof import('../telemetry/logger');
type GrpcLog = typeof import('./grpc-log');
type StartWorkers = typeof import('./start-workers');
type ListeningLine = typeof import('./listening-line');

/** What `gatehouse start` runs: the options of `createGatehouse` the command line and the environment give, and how many workers. */
export interface StartOptions {
  readonly options: ResolvedOptions;
  /** `--workers`, `WORKERS`. */
  readonly workers: number | 'auto';
  /** `--young-generation`, `YOUNG_GENERATION`: MiB. */
  readonly youngGeneration: number;
  /** `--parallel-scavenge`, `PARALLEL_SCAVENGE`. */
  readonly parallelScavenge: ParallelScavenge;
}

function startOptions(args: readonly string[]): StartOptions | undefined {
  const line = parseCommandLine('start', args);
  if (line.help) return undefined;
  if (line.positionals.length > 0)
    throw new UsageError(`start takes no arguments (got ${JSON.stringify(line.positionals[0])})`);
  const read = readCommandOptions(line);
  const options: Record<string, unknown> = { tls: tlsPair(read) };
  for (const name of OPTION_NAMES) {
    if (libraryName(name) === name && read.values[name] !== undefined) options[name] = read.values[name];
  }
  return {
    options: options as ResolvedOptions,
    workers: read.values.workers ?? 1,
    youngGeneration: read.values.youngGeneration ?? DEFAULT_YOUNG_GENERATION_MB,
    parallelScavenge: read.values.parallelScavenge ?? 'auto',
  };
}

/** Runs `gatehouse start`; resolves an exit status when it does not serve, `undefined` once it does. */
export async function start(args: readonly string[], signals: ServerSignals): Promise<number | undefined> {
  const wanted = startOptions(args);
  if (wanted === undefined) return print(startUsage());
  const { options } = wanted;
  const { createLogger } = require('../telemetry/logger') as LoggerModule;
  const logger = createLogger({ level: options.logLevel });
  signals.useLogger(logger);
  (require('./grpc-log') as GrpcLog).logGrpcThrough(logger);
  /** A start given up for a stop signal: nothing serves, and what it opened is closed. */
  const stopped = () => {
    logger.info('gatehouse stopped');
    return 0;
  };
  if (signals.stopping.aborted) return stopped();
  chooseScavenging(wanted.parallelScavenge, logger);
  const workers = workerCount(wanted, logger);
  if (workers > 1) {
    // Each worker's is bounded as it starts: the main thread's grows again, serving none.
    if (!youngGenerationFlagsGiven()) releaseYoungGeneration();
    return (require('./start-workers') as StartWorkers).serveOnWorkers(options, signals, logger, {
      count: workers,
      youngGenerationMb: wanted.youngGeneration,
    });
  }
  const gatehouse = require('../gatehouse') as GatehouseModule;
  const ports = await gatehouse.bindGatehousePorts(options);
  const closePorts = () => Promise.all([ports.http.close(), ports.grpc?.close()]);
  let built: Awaited<ReturnType<GatehouseModule['createGatehouse']>>;
  try {
    const given: GatehouseOptions = { ...options, logger, ports, signal: signals.stopping };
    built = await gatehouse.createGatehouse(given);
  } catch (err) {
    await closePorts();
    if (signals.stopping.aborted) return stopped();
    throw err;
  }
  if (signals.stopping.aborted) {
    await built.stop();
    await closePorts();
    return 0;
  }
  const listening = await built.start().catch(async (err: unknown) => {
    await built.stop();
    throw err;
  });
  // Its young generation grows under traffic as far as asked, and again after an idle spell shrank it: two of its three parts are the semi-spaces it grows by.
  if (!youngGenerationFlagsGiven()) keepYoungGenerationAt(Math.floor(wanted.youngGeneration / 3) * 2 * 2 ** 20);
  // Handlers first: whoever waits for the line may signal as soon as it is read.
  signals.serve({ stop: () => built.stop(), reload: () => built.reload() });
  const { bookingsInWords, listeningLine } = require('./listening-line') as ListeningLine;
  const bookings = bookingsInWords(options, built.bookingsState);
  process.stdout.write(listeningLine(options, listening, bookings));
  // The bookings answer 503 until their database is open: said when it is (its failure is logged).
  if (built.bookingsState === 'opening' || built.bookingsState === 'open')
    built.openBookings().then(
      () => {
        if (!signals.stopping.aborted) process.stdout.write(`gatehouse bookings open (${bookings})\n`);
      },
      () => undefined,
    );
  return undefined;
}

/**
 * How many workers `wanted` asks for (`auto`: the cores this process may
 * use): one where this Node cannot listen beside itself, which is said.
 */
function workerCount(wanted: StartOptions, logger: Logger): number {
  const count = wanted.workers === 'auto' ? availableParallelism() : wanted.workers;
  if (count > 1 && !supportsReusePort()) {
    logger.warn(
      { workers: count, node: process.versions.node },
      'serving with one worker: workers share the ports with reusePort, which needs Node 22.12 or later',
    );
    return 1;
  }
  return count;
}
