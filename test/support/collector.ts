/**
 * @module test/support/collector
 * V8's garbage collector for a test in a process not started with
 * `--expose-gc`: a test about what is kept alive, or what reaches the old
 * generation, runs the collections it needs itself.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** `gc()`, a full collection; `gc({ type: 'minor' })`, a young-generation one. */
export type Collector = (options?: { type: 'minor' | 'major' }) => void;

/** V8's `gc`, exposed to a new context made for it. */
export function collector(): Collector {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as Collector;
}
