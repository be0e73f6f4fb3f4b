#!/usr/bin/env node
/**
 * @module cli/main
 * The `gatehouse` command: `start` runs the whole gateway, `check` validates a
 * config folder, `serve` runs one module alone so that the monolith can be split.
 */

type Commands = typeof import('./commands');

/**
 * Runs the command line; resolves an exit code for commands that end, and
 * `undefined` for servers, which run until a signal.
 */
export function main(argv: readonly string[]): Promise<number | undefined> {
  return (require('./commands') as Commands).runCommand(argv);
}

if (require.main === module) {
  // `gatehouse start | head -3`, or standard output on a full disk: what
  // cannot be printed there is lost, and the server goes on serving.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  const argv = process.argv.slice(2);
  const server = argv[0] === 'start' || argv[0] === 'serve';
  void main(argv).then((code) => {
    if (code === undefined) return;
    process.exitCode = code;
    // A server that failed to start has nothing left to run: whatever it
    // opened and could not close (a database, a socket) must not keep the
    // process alive, holding its data folder, with no server in it.
    if (code !== 0 && server) process.exit();
  });
}
