/**
 * @module cli/start-command
 * `gatehouse start`: the whole gateway from a config folder. Its ports are
 * bound first, so that a port in use is said before a first start makes
 * its data folder; a stop signal while it starts gives the start up at its
 * next step, closes what it opened, and exits 0. It serves as soon as it
 * listens; the bookings database opens meanwhile, and a second line says
 * when it is open.
 */
import { libraryName, OPTION_NAMES, tlsPair, type GatehouseOptions, type ResolvedOptions } from '../gatehouse/options';
import type { BoundPorts } from '../gatehouse/options';
import type { BoundPort } from '../ports';
import { parseCommandLine, readCommandOptions, UsageError } from './command-line';
import { print } from './output';
import type { ServerSignals } from './signals';
import { startUsage } from './usage';

type GatehouseModule = typeof import('../gatehouse');
type Http = typeof import('../http');
type Telemetry = typeof import('../telemetry');
type GrpcLog = typeof import('./grpc-log');

/** The options of `createGatehouse` the command line and the environment give. */
function startOptions(args: readonly string[]): ResolvedOptions | undefined {
  const line = parseCommandLine('start', args);
  if (line.help) return undefined;
  if (line.positionals.length > 0)
    throw new UsageError(`start takes no arguments (got ${JSON.stringify(line.positionals[0])})`);
  const read = readCommandOptions(line);
  const options: Record<string, unknown> = { tls: tlsPair(read) };
  for (const name of OPTION_NAMES) {
    if (libraryName(name) === name && read.values[name] !== undefined) options[name] = read.values[name];
  }
  return options as ResolvedOptions;
}

/** Binds the HTTP port, and the gRPC port unless there is none; rejects saying which address cannot be had. */
async function bindPorts(
  options: ResolvedOptions,
  gatehouse: GatehouseModule,
): Promise<BoundPorts & { http: BoundPort }> {
  const { bindPort, listenFailure } = gatehouse;
  const http = await bindPort(options.host, options.port).catch((err: unknown) => {
    throw listenFailure(err, options.tls ? 'HTTPS' : 'HTTP', options.host, options.port);
  });
  if (options.grpcPort === false) return { http };
  const grpcPort = options.grpcPort;
  const grpc = await bindPort(options.grpcHost, grpcPort, { everyAddress: true }).catch(async (err: unknown) => {
    await http.close();
    throw listenFailure(err, 'gRPC', options.grpcHost, grpcPort);
  });
  return { http, grpc };
}

/** Runs `gatehouse start`; resolves an exit status when it does not serve, `undefined` once it does. */
export async function start(args: readonly string[], signals: ServerSignals): Promise<number | undefined> {
  const options = startOptions(args);
  if (options === undefined) return print(startUsage());
  const gatehouse = require('../gatehouse') as GatehouseModule;
  const { hostPort } = require('../http') as Http;
  const { createLogger } = require('../telemetry') as Telemetry;
  const logger = createLogger({ level: options.logLevel });
  signals.useLogger(logger);
  (require('./grpc-log') as GrpcLog).logGrpcThrough(logger);
  /** A start given up for a stop signal: nothing serves, and what it opened is closed. */
  const stopped = () => {
    logger.info('gatehouse stopped');
    return 0;
  };
  if (signals.stopping.aborted) return stopped();
  const ports = await bindPorts(options, gatehouse);
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
  // Handlers first: whoever waits for the line may signal as soon as it is read.
  signals.serve({ stop: () => built.stop(), reload: () => built.reload() });
  const grpc =
    listening.grpcPort === undefined ? '' : `gRPC rate limits on ${hostPort(options.grpcHost, listening.grpcPort)}; `;
  const secure = listening.httpsPort === undefined ? '' : `HTTPS on ${hostPort(options.host, listening.httpsPort)}; `;
  const additional = (listening.additionalPorts ?? [])
    .map((port) => `HTTP also on ${hostPort(options.host, port)}; `)
    .join('');
  const counters =
    options.redisUrl === undefined ? '' : `counters: Redis at ${gatehouse.describeRedisUrl(options.redisUrl)}; `;
  // Which folder is served matters as much as where: GATEHOUSE_CONFIG or a
  // relative --config may not be the folder the user has just edited. So does
  // where the counters and the bookings go: a data folder beside another config is another database.
  const bookings =
    built.bookingsState === 'none' && options.bookingStore !== 'memory'
      ? 'none (no Mapping routes to a booking service)'
      : gatehouse.describeStorage(options);
  process.stdout.write(
    `gatehouse listening on ${listening.url} (${additional}${secure}${grpc}config folder ${options.configDir}; ${counters}bookings: ${bookings})\n`,
  );
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
