/**
 * @module cli/serve-command
 * `gatehouse serve <module>`: the command line of one module alone. Its
 * port is bound first, as `start` binds its own, and a stop signal while
 * it starts gives the start up.
 */
import { commandOptions, OPTIONS, type OptionName, type ServeOnly } from '../gatehouse/options';
import { parseCommandLine, readCommandOptions, UsageError } from './command-line';
import { chooseScavenging } from './scavenging';
import { print } from './output';
import { isServable, SERVABLE_MODULES } from './servable';
import type { ServerSignals } from './signals';
import { serveUsage } from './usage';

type GatehouseModule = typeof import('../gatehouse');
type Ports = typeof import('../ports');
type Serve = typeof import('./serve');
type Telemetry = typeof import('../telemetry');
type GrpcLog = typeof import('./grpc-log');

/** Runs `gatehouse serve`; resolves an exit status when it does not serve, `undefined` once it does. */
export async function serve(args: readonly string[], signals: ServerSignals): Promise<number | undefined> {
  const line = parseCommandLine('serve', args);
  if (line.help) return print(serveUsage());
  const name = line.positionals[0];
  if (line.positionals.length !== 1 || !name)
    throw new UsageError(`serve takes one module: ${SERVABLE_MODULES.join(', ')}`);
  if (!isServable(name)) throw new UsageError(`unknown module '${name}'; modules: ${SERVABLE_MODULES.join(', ')}`);
  // Silently ignored, an option for another module would leave the user believing it applied (counters shared).
  for (const [option, flag] of line.flags) {
    const only = (OPTIONS[option] as { serveOnly?: ServeOnly }).serveOnly;
    if (only && !only.modules.includes(name))
      throw new UsageError(`${flag} is for ${only.modules.join(' and ')} only: ${name} ${only.others}`);
  }
  // Alone, the rate-limit service's port is GRPC_PORT when no --port is given.
  const names: OptionName[] = [...commandOptions('serve'), 'bookingStore', 'grpcPort'];
  const { values } = readCommandOptions(line, names);
  const port = name === 'ratelimit' && values.port === undefined ? values.grpcPort : values.port;
  if (port === false || port === undefined) throw new UsageError('serve ratelimit needs a port: --port or GRPC_PORT');

  const { listenFailure } = require('../gatehouse') as GatehouseModule;
  const { bindPort } = require('../ports') as Ports;
  const { createLogger } = require('../telemetry') as Telemetry;
  const logger = createLogger({ level: values.logLevel });
  signals.useLogger(logger);
  chooseScavenging(values.parallelScavenge ?? 'auto', logger);
  if (name === 'ratelimit') (require('./grpc-log') as GrpcLog).logGrpcThrough(logger);
  const stopped = () => {
    logger.info({ module: name }, `${name} stopped`);
    return 0;
  };
  if (signals.stopping.aborted) return stopped();
  const protocol = name === 'ratelimit' ? 'gRPC' : 'HTTP';
  const bound = await bindPort(values.host!, port, { everyAddress: name === 'ratelimit' }).catch((err: unknown) => {
    throw listenFailure(err, protocol, values.host!, port);
  });
  const { serveModule } = require('./serve') as Serve;
  let served: Awaited<ReturnType<Serve['serveModule']>>;
  try {
    served = await serveModule(name, {
      ...(values as Required<typeof values>),
      redisUrl: values.redisUrl,
      databaseUrl: values.databaseUrl,
      port: bound,
      logger,
      signal: signals.stopping,
    });
  } catch (err) {
    await bound.close();
    if (signals.stopping.aborted) return stopped();
    throw err;
  }
  signals.serve(served);
  const about = [
    served.protocol,
    served.configDir && `config folder ${served.configDir}`,
    served.counters && `counters: ${served.counters}`,
    served.bookings && `bookings: ${served.bookings}`,
  ]
    .filter(Boolean)
    .join('; ');
  process.stdout.write(`${name} listening on ${served.address}${about && ` (${about})`}\n`);
  return undefined;
}
