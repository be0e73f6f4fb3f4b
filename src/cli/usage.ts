/**
 * @module cli/usage
 * The help of the `gatehouse` command and of each of its commands. The
 * option lines are written from the options' declarations
 * (gatehouse/options); what is here is what each command is.
 */
import { optionsHelp } from '../gatehouse/options';
import { SERVABLE_MODULES } from './servable';

export const USAGE = `Usage: gatehouse <command> [options]

Commands:
  start              run the gateway with every built-in module (what npm start runs)
  check [dir]        validate a config folder and print the route table
  serve <module>     run one module alone: ${SERVABLE_MODULES.join(', ')}

Run 'gatehouse <command> --help' for the options of a command,
'gatehouse --version' for the version.`;

const SIGNALS = `SIGTERM or SIGINT (Ctrl-C) stops it gracefully; another one a second or
more later stops it at once (the same one within a second is the same stop:
Ctrl-C reaches npm and the gateway both, and npm passes its own on).
SIGHUP reloads its files, as a change in them does. A signal that comes
while it starts is acted on as it is once started.`;

/** `gatehouse start --help`. */
export function startUsage(): string {
  return `Usage: gatehouse start [options]

Runs the gateway and its built-in modules from a config folder: HTTP on
HOST:PORT, the gRPC rate-limit service on HOST:GRPC_PORT.

Options (each also read from the environment variable in brackets; one set
empty counts as unset):
${optionsHelp('start')}
  -h, --help         show this help

${SIGNALS}
Run through npx or an npm script, it also stops once the npm process that
started it is gone.
Exit status: 1 when it cannot start (the problem is on stderr), 2 for a
mistake on the command line; 0 once stopped by SIGTERM or SIGINT.`;
}

/** `gatehouse serve --help`. */
export function serveUsage(): string {
  return `Usage: gatehouse serve <module> [options]

Runs one module alone, so that a gateway can be pointed at it over the network.
Modules: ${SERVABLE_MODULES.join(', ')}.
ratelimit serves gRPC, on --port, else GRPC_PORT, else 8081; the others HTTP.

Options:
${optionsHelp('serve')}
  -h, --help         show this help

${SIGNALS}`;
}

/** `gatehouse check --help`. */
export function checkUsage(): string {
  return `Usage: gatehouse check [dir | --config <dir>] [options]

Validates a config folder: the gateway records, the rate limits, the users
file and the booking data. Prints the route table in match order, what each
Emissary resource became, and the records of another ambassador_id, or
every problem; exits 1 when there is a problem. A file larger than the file
size limit is a problem, as it is to start.

Options:
${optionsHelp('check')}
  -h, --help         show this help`;
}
