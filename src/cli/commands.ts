/**
 * @module cli/commands
 * The `gatehouse` command line: which command runs, and how one that cannot
 * run ends (a message on stderr, no stack trace; exit 2 for a mistake on the
 * command line, 1 for anything else).
 *
 * What a command runs is loaded when it runs: help, the version and a
 * mistake on the command line are answered without loading the gateway,
 * its gRPC server and their libraries.
 */
import { OptionError } from '../gatehouse/options';
import { packageVersion } from '../gatehouse/version';
import { UsageError } from './command-line';
import { catchServerSignals, type ServerSignals } from './signals';
import { print, shown } from './output';
import { USAGE } from './usage';

type Gateway = typeof import('../gateway');
type Start = typeof import('./start-command');
type Serve = typeof import('./serve-command');
type Check = typeof import('./check-command');

/** Whether `command` runs a server, which catches signals from the first moment and runs until one. */
export function isServerCommand(command: string | undefined): boolean {
  return command === 'start' || command === 'serve';
}

/** Whether `err` is a mistake on the command line rather than in the environment or the config. */
function isUsageError(err: unknown): boolean {
  return err instanceof UsageError || (err instanceof OptionError && err.onCommandLine);
}

/**
 * Runs the command line; resolves an exit code for commands that end, and
 * `undefined` for servers, which run until a signal. A server command
 * takes the signals its process has caught from its start, or catches them.
 */
export async function runCommand(argv: readonly string[], signals?: ServerSignals): Promise<number | undefined> {
  const [command, ...rest] = argv;
  const caught = isServerCommand(command) ? (signals ?? catchServerSignals()) : undefined;
  try {
    switch (command) {
      case 'start':
        return await (require('./start-command') as Start).start(rest, caught!);
      case 'serve':
        return await (require('./serve-command') as Serve).serve(rest, caught!);
      case 'check':
        return await (require('./check-command') as Check).check(rest);
      case '--version':
      case '-v':
      case 'version':
        return print(packageVersion());
      case 'help':
      case '--help':
      case '-h':
        return print(USAGE);
      case undefined:
        process.stderr.write(`gatehouse: no command given\n\n${USAGE}\n`);
        return 2;
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (err) {
    caught?.release();
    return report(err, command);
  }
}

/** Writes why `command` cannot run; resolves its exit status. */
function report(err: unknown, command: string | undefined): number {
  // By its name first: a mistake on the command line needs no gateway loaded to be told.
  if ((err as Error | null)?.name === 'ConfigError' && err instanceof (require('../gateway') as Gateway).ConfigError) {
    process.stderr.write(
      shown(`gatehouse: the config cannot be served:\n${err.problems.map((p) => `  ${p.text}`).join('\n')}\n`),
    );
    return 1;
  }
  process.stderr.write(shown(`gatehouse: ${(err as Error).message}\n`));
  if (!isUsageError(err)) return 1;
  // The options are in the command's own help; the top-level one lists commands only.
  const help =
    command === 'start' || command === 'check' || command === 'serve'
      ? `gatehouse ${command} --help`
      : 'gatehouse --help';
  process.stderr.write(`Run '${help}' for usage.\n`);
  return 2;
}
