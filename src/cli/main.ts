#!/usr/bin/env node
/**
 * @module cli/main
 * The `gatehouse` command: `start` runs the whole gateway, `check` validates a
 * config folder, `serve` runs one module alone so that the monolith can be split.
 *
 * A server command catches its signals before anything else is loaded
 * (./signals): loading the gateway takes a noticeable part of a second,
 * and until the signals are caught a SIGHUP ends the process silently, and
 * a SIGTERM with its data folder half made. Only Node's own start-up comes
 * before this file runs. Node's compile cache is turned on next
 * (./compile-cache), so that the code loaded after it is compiled once,
 * not at every start.
 */
// Not the platform index, which loads every dependency whose private state it reads.
import { holdYoungGeneration, youngGenerationFlagsGiven } from '../platform/v8-young';
import { enableCompileCache, flushCompileCache } from './compile-cache';
import { catchServerSignals, type ServerSignals } from './signals';

type Commands = typeof import('./commands');

/**
 * Runs the command line; resolves an exit code for commands that end, and
 * `undefined` for servers, which run until a signal (the ones `signals`
 * caught, else their own).
 */
export function main(argv: readonly string[], signals?: ServerSignals): Promise<number | undefined> {
  return (require('./commands') as Commands).runCommand(argv, signals);
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  const server = argv[0] === 'start' || argv[0] === 'serve';
  const signals = server ? catchServerSignals() : undefined;
  // Before the rest of the code is loaded: it is what the cache spares compiling.
  enableCompileCache(argv.slice(1));
  // Loading the gateway would grow the young generation to node's most; it grows once serving, as far as `start` lets it.
  if (argv[0] === 'start' && !youngGenerationFlagsGiven()) holdYoungGeneration();
  // `gatehouse start | head -3`, or standard output on a full disk: what
  // cannot be printed there is lost, and the server goes on serving.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  void main(argv, signals).then((code) => {
    // A server that serves has loaded what it starts with: kept now, not only once it exits.
    if (code === undefined) return flushCompileCache();
    process.exitCode = code;
    // A server that did not start, or gave up its start, has nothing left
    // to run: whatever it could not close (a database, a socket) must not
    // keep the process alive, holding its data folder, with no server in it.
    if (server) process.exit();
  });
}
