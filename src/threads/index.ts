/**
 * @module threads
 * Starts a worker thread from a module of Gatehouse's own, wherever the
 * code runs: the compiled `.js` file in the package, or the `.ts` source
 * under tsx in development and in the tests.
 */
import { join } from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Whether this code runs compiled, from the package, rather than from the sources. */
const COMPILED = __filename.endsWith('.js');

/**
 * Starts the module at `file`, a path without its extension (for example
 * `join(__dirname, 'worker')`), on a thread of its own with `options`.
 */
export function startThread(file: string, options: WorkerOptions = {}): Worker {
  if (COMPILED) return new Worker(`${file}.js`, options);
  // By its path, untyped: an import would compile it, and tsx with it, into the package.
  const source = require(join(__dirname, 'source')) as { startSourceThread(file: string, o: WorkerOptions): Worker };
  return source.startSourceThread(`${file}.ts`, options);
}
