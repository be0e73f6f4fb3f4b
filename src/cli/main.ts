#!/usr/bin/env node
/**
 * @module cli/main
 * The `gatehouse` command: `start` runs the whole gateway, `check` validates a
 * config folder, `serve` runs one module alone so that the monolith can be split.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { isBookingModule, isServable, SERVABLE_MODULES } from './servable';
import { CHECK_USAGE, SERVE_USAGE, START_USAGE, USAGE } from './usage';
import { holdSignalsWhileStarting, runUntilSignal, stopHoldingSignals } from './signals';
import { parseByteSize } from '../files';

// What a command runs is loaded when it runs: help, the version and a
// mistake on the command line are answered without loading the gateway,
// its gRPC server and their libraries (half a second of a start).
type Gateway = typeof import('../gateway');
type Http = typeof import('../http');
type GatehouseModule = typeof import('../gatehouse');
type Check = typeof import('./check');
type GrpcLog = typeof import('./grpc-log');
type Serve = typeof import('./serve');

const common = {
  help: { type: 'boolean', short: 'h' },
  config: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  redis: { type: 'string' },
  'database-url': { type: 'string' },
  data: { type: 'string' },
  'database-timeout-ms': { type: 'string' },
  'file-size-limit': { type: 'string' },
  'drain-delay-ms': { type: 'string' },
  'grpc-max-message-bytes': { type: 'string' },
  'grpc-max-connections': { type: 'string' },
  'grpc-request-timeout-ms': { type: 'string' },
  'max-descriptor-entries': { type: 'string' },
} satisfies ParseArgsConfig['options'];

function portOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || n > 65535)
    throw new UsageError(`${name} must be a port number (0-65535), got '${value}'`);
  return n;
}

/** A whole number of at least `min` given on the command line. */
function countOption(value: string | undefined, name: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,15}$/.test(value) || Number(value) < min)
    throw new UsageError(`${name} must be a whole number of ${min} or more, got '${value}'`);
  return Number(value);
}

/** The options of a stop and of the rate-limit service, as `start` and `serve` take them. */
function limitOptions(values: Record<string, string | boolean | undefined>) {
  return {
    drainDelayMs: countOption(values['drain-delay-ms'] as string | undefined, '--drain-delay-ms'),
    grpcMaxMessageBytes: countOption(
      values['grpc-max-message-bytes'] as string | undefined,
      '--grpc-max-message-bytes',
      1,
    ),
    grpcMaxConnections: countOption(values['grpc-max-connections'] as string | undefined, '--grpc-max-connections', 1),
    grpcRequestTimeoutMs: countOption(
      values['grpc-request-timeout-ms'] as string | undefined,
      '--grpc-request-timeout-ms',
      1,
    ),
    maxDescriptorEntries: countOption(
      values['max-descriptor-entries'] as string | undefined,
      '--max-descriptor-entries',
      1,
    ),
  };
}

class UsageError extends Error {}

/**
 * A byte size given as option `name` (`512k`, `16m`, bytes); `undefined`
 * without it, for the command to read the environment (GATEHOUSE_FILE_SIZE_LIMIT,
 * BODY_LIMIT), else the default, once it has loaded what it runs.
 */
function byteSizeOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  try {
    return parseByteSize(value, name);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * Refuses an option given an empty value, as `--config "$DIR"` gives one with
 * DIR unset: read as absent, it would fall back to a default the user did not
 * choose (plain HTTP for the TLS files, memory for Redis); read as it is, to
 * the current folder or every interface.
 */
function refuseEmpty(values: Record<string, string | boolean | undefined>): void {
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === 'string' && value.trim() === '') throw new UsageError(`--${name} needs a value`);
  }
}

async function start(args: string[]): Promise<number | undefined> {
  const { values } = parseArgs({
    args,
    options: {
      ...common,
      'grpc-port': { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'no-watch': { type: 'boolean' },
      'cluster-domain': { type: 'string' },
      'ambassador-id': { type: 'string' },
      'trust-proxy': { type: 'boolean' },
      'body-limit': { type: 'string' },
      'shutdown-grace-ms': { type: 'string' },
      'keep-alive-timeout-ms': { type: 'string' },
    },
  });
  if (values.help) return print(START_USAGE);
  refuseEmpty(values);
  // Either half may come from the environment, as every flag may.
  const tlsCert = values['tls-cert'] ?? (process.env.TLS_CERT || undefined);
  const tlsKey = values['tls-key'] ?? (process.env.TLS_KEY || undefined);
  const tlsFlagged = values['tls-cert'] !== undefined || values['tls-key'] !== undefined;
  if (tlsFlagged && (tlsCert === undefined || tlsKey === undefined))
    throw new UsageError('--tls-cert and --tls-key go together (either may be TLS_CERT or TLS_KEY)');
  const clusterDomain = values['cluster-domain'];
  const options = {
    configDir: values.config,
    host: values.host,
    port: portOption(values.port, '--port'),
    grpcPort: portOption(values['grpc-port'], '--grpc-port'),
    redisUrl: values.redis,
    databaseUrl: values['database-url'],
    dataDir: values.data,
    databaseTimeoutMs: countOption(values['database-timeout-ms'], '--database-timeout-ms', 1),
    tls: tlsFlagged ? { cert: tlsCert!, key: tlsKey! } : undefined,
    watch: !values['no-watch'],
    fileSizeLimit: byteSizeOption(values['file-size-limit'], '--file-size-limit'),
    clusterDomain,
    ambassadorId: values['ambassador-id'],
    trustProxy: values['trust-proxy'] || undefined,
    bodyLimit: byteSizeOption(values['body-limit'], '--body-limit'),
    shutdownGraceMs: countOption(values['shutdown-grace-ms'], '--shutdown-grace-ms'),
    keepAliveTimeoutMs: countOption(values['keep-alive-timeout-ms'], '--keep-alive-timeout-ms'),
    ...limitOptions(values),
  };
  const { createGatehouse, describeStorage, isDnsDomain } = require('../gatehouse') as GatehouseModule;
  if (clusterDomain !== undefined && !isDnsDomain(clusterDomain))
    throw new UsageError(`--cluster-domain must be a DNS domain such as cluster.local, got '${clusterDomain}'`);
  const { hostPort } = require('../http') as Http;
  const { logGrpcThrough } = require('./grpc-log') as GrpcLog;
  holdSignalsWhileStarting();
  const gatehouse = await createGatehouse(options);
  logGrpcThrough(gatehouse.logger);
  const listening = await gatehouse.start().catch(async (err) => {
    await gatehouse.stop();
    throw err;
  });
  const grpc =
    listening.grpcPort === undefined
      ? ''
      : `gRPC rate limits on ${hostPort(gatehouse.options.grpcHost, listening.grpcPort)}; `;
  // Handlers first: whoever waits for the line may signal as soon as it is read.
  runUntilSignal(
    () => gatehouse.stop(),
    gatehouse.logger,
    () => gatehouse.reload(),
  );
  // Which folder is served matters as much as where: GATEHOUSE_CONFIG or a
  // relative --config may not be the folder the user has just edited. So does
  // where the bookings go: a data folder beside another config is another database.
  process.stdout.write(
    `gatehouse listening on ${listening.url} (${grpc}config folder ${gatehouse.options.configDir}; bookings: ${describeStorage(gatehouse.options)})\n`,
  );
  return undefined;
}

async function check(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    // --config as start takes it, so that the folder a start is given can be checked with the same words.
    options: {
      help: common.help,
      config: { type: 'string' },
      'file-size-limit': common['file-size-limit'],
      'ambassador-id': { type: 'string' },
    },
    allowPositionals: true,
  });
  if (values.help) return print(CHECK_USAGE);
  refuseEmpty(values);
  if (positionals.length > 1) throw new UsageError('check takes one folder');
  if (positionals.length === 1 && values.config !== undefined)
    throw new UsageError('give check its folder once: as [dir] or as --config <dir>');
  if (positionals[0]?.trim() === '') throw new UsageError('check needs a folder name, not an empty one');
  const fileSizeLimit = byteSizeOption(values['file-size-limit'], '--file-size-limit');
  const { checkFolder } = require('./check') as Check;
  const { envFileSizeLimit } = require('../gatehouse') as GatehouseModule;
  const report = await checkFolder(positionals[0] ?? values.config ?? (process.env.GATEHOUSE_CONFIG || 'config'), {
    fileSizeLimit: fileSizeLimit ?? envFileSizeLimit(process.env.GATEHOUSE_FILE_SIZE_LIMIT),
    ambassadorId: values['ambassador-id'] ?? (process.env.AMBASSADOR_ID || undefined),
  });
  if (report.ok) process.stdout.write(shown(report.text));
  else process.stderr.write(shown(report.text));
  return report.ok ? 0 : 1;
}

async function serve(args: string[]): Promise<number | undefined> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...common, 'no-watch': { type: 'boolean' } },
    allowPositionals: true,
  });
  if (values.help) return print(SERVE_USAGE);
  refuseEmpty(values);
  const name = positionals[0];
  if (positionals.length !== 1 || !name) throw new UsageError(`serve takes one module: ${SERVABLE_MODULES.join(', ')}`);
  if (!isServable(name)) throw new UsageError(`unknown module '${name}'; modules: ${SERVABLE_MODULES.join(', ')}`);
  // Silently ignored, it would leave the user believing counters are shared.
  if (values.redis !== undefined && name !== 'ratelimit')
    throw new UsageError(`--redis is for ratelimit only: ${name} keeps no counters`);
  for (const option of ['database-url', 'data', 'database-timeout-ms'] as const) {
    if (values[option] !== undefined && !isBookingModule(name))
      throw new UsageError(`--${option} is for hotel-booking and car-booking only: ${name} keeps no bookings`);
  }
  for (const option of [
    'grpc-max-message-bytes',
    'grpc-max-connections',
    'grpc-request-timeout-ms',
    'max-descriptor-entries',
  ] as const) {
    if (values[option] !== undefined && name !== 'ratelimit')
      throw new UsageError(`--${option} is for ratelimit only: ${name} serves HTTP`);
  }
  const options = {
    configDir: values.config,
    host: values.host,
    port: portOption(values.port, '--port'),
    redisUrl: values.redis,
    databaseUrl: values['database-url'],
    dataDir: values.data,
    databaseTimeoutMs: countOption(values['database-timeout-ms'], '--database-timeout-ms', 1),
    fileSizeLimit: byteSizeOption(values['file-size-limit'], '--file-size-limit'),
    watch: !values['no-watch'],
    ...limitOptions(values),
  };
  const { serveModule } = require('./serve') as Serve;
  holdSignalsWhileStarting();
  const served = await serveModule(name, options);
  runUntilSignal(
    () => served.stop(),
    served.logger,
    () => served.reload(),
  );
  const about = [
    served.protocol,
    served.configDir && `config folder ${served.configDir}`,
    served.bookings && `bookings: ${served.bookings}`,
  ]
    .filter(Boolean)
    .join('; ');
  process.stdout.write(`${name} listening on ${served.address}${about && ` (${about})`}\n`);
  return undefined;
}

/** The version of the package this command is part of (from src/ or dist/, both two folders down). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * `text` with the control characters a config file may hold (in a Mapping's
 * name, a path, a problem quoting either) shown as escapes: written raw, an
 * ESC sequence from a file would act on the terminal of whoever checks it.
 */
function shown(text: string): string {
  return text.replace(
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function print(text: string): number {
  process.stdout.write(`${text}\n`);
  return 0;
}

/**
 * Runs the command line; resolves an exit code for commands that end, and
 * `undefined` for servers, which run until a signal.
 */
export async function main(argv: string[]): Promise<number | undefined> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'start':
        return await start(rest);
      case 'check':
        return await check(rest);
      case 'serve':
        return await serve(rest);
      case '--version':
      case '-v':
      case 'version':
        return print(packageVersion());
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        return print(USAGE);
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (err) {
    if (isServerCommand(command)) stopHoldingSignals();
    // By its name first: a mistake on the command line needs no gateway loaded to be told.
    if (
      (err as Error | null)?.name === 'ConfigError' &&
      err instanceof (require('../gateway') as Gateway).ConfigError
    ) {
      process.stderr.write(
        shown(`gatehouse: the config cannot be served:\n${err.problems.map((p) => `  ${p.text}`).join('\n')}\n`),
      );
      return 1;
    }
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(shown(`gatehouse: ${(err as Error).message}\n`));
    // The options are in the command's own help; the top-level one lists commands only.
    const help =
      command === 'start' || command === 'check' || command === 'serve'
        ? `gatehouse ${command} --help`
        : 'gatehouse --help';
    if (usage) process.stderr.write(`Run '${help}' for usage.\n`);
    return usage ? 2 : 1;
  }
}

/** Whether `command` runs a server, which holds signals while it starts and runs until one. */
function isServerCommand(command: string | undefined): boolean {
  return command === 'start' || command === 'serve';
}

if (require.main === module) {
  // `gatehouse start | head -3`, or standard output on a full disk: what
  // cannot be printed there is lost, and the server goes on serving.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  const argv = process.argv.slice(2);
  void main(argv).then((code) => {
    if (code === undefined) return;
    process.exitCode = code;
    // A server that failed to start has nothing left to run: whatever it
    // opened and could not close (a database, a socket) must not keep the
    // process alive, holding its data folder, with no server in it.
    if (code !== 0 && isServerCommand(argv[0])) process.exit();
  });
}
