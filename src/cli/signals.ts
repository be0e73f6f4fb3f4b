/**
 * @module cli/signals
 * Graceful shutdown of a running server on SIGTERM or SIGINT: the first signal
 * stops it and exits 0 once it has stopped; a second one exits at once.
 */

interface Log {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

const quiet: Log = { info: () => undefined, error: (obj) => process.stderr.write(`${JSON.stringify(obj)}\n`) };

/** Stops with `stop` on the first SIGTERM or SIGINT, then exits. */
export function runUntilSignal(stop: () => Promise<void>, log: Log = quiet): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
