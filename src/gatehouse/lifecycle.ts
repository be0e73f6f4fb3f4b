/**
 * @module gatehouse/lifecycle
 * A Gatehouse's `start()` and `stop()` as its users call them: one start at
 * a time, tried again after one that failed (a port in use), none after a
 * stop; a stop done once however often it is asked, after the start under
 * way.
 */
import { listenAll, type Running, type StartParts } from './start';
import { stopAll, type StopParts } from './stop';
import type { Listening } from './types';

/** The start and stop of one Gatehouse. */
export interface Lifecycle {
  readonly start: () => Promise<Listening>;
  readonly stop: () => Promise<void>;
}

/** The start and stop of the Gatehouse whose parts are given; `onListening` runs once a start listens. */
export function createLifecycle(
  startParts: StartParts,
  stopParts: Omit<StopParts, 'starting'>,
  running: Running,
  onListening: () => void,
): Lifecycle {
  let stopping: Promise<void> | undefined;
  let starting: Promise<Listening> | undefined;
  return {
    start: () => {
      if (stopping)
        return Promise.reject(new Error('this Gatehouse is stopped: create another with createGatehouse()'));
      if (starting) return Promise.reject(new Error('this Gatehouse is already started'));
      // Set before the first await, so that a second start() or a stop() sees it at once.
      const run = listenAll(startParts, running);
      starting = run;
      run.then(onListening, () => {
        if (starting === run) starting = undefined;
      });
      return run;
    },
    stop: () => {
      stopping ??= stopAll({ ...stopParts, starting: () => starting }, running);
      return stopping;
    },
  };
}
