/**
 * @module cli/signals
 * Graceful shutdown of a running server on SIGTERM or SIGINT: the first signal
 * stops it and exits 0 once it has stopped; a second one exits at once.
 * SIGHUP reloads, as nginx does and systemd's `ExecReload=kill -HUP` expects.
 */

interface Log {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

const quiet: Log = { info: () => undefined, error: (obj) => process.stderr.write(`${JSON.stringify(obj)}\n`) };

/**
 * Stops with `stop` on the first SIGTERM or SIGINT, then exits. With
 * `reload`, calls it on every SIGHUP until then: SIGHUP would otherwise end
 * the process at once, requests in flight with it. The reload logs what it
 * applied or refused.
 */
export function runUntilSignal(stop: () => Promise<void>, log: Log = quiet, reload?: () => Promise<unknown>): void {
  let stopping = false;
  if (reload) {
    process.on('SIGHUP', (signal: NodeJS.Signals) => {
      if (stopping) return;
      log.info({ signal }, 'reloading the config folder');
      // A signal handler that throws, at once or later, would end the process.
      Promise.resolve()
        .then(reload)
        .catch((err: unknown) => log.error({ err }, 'reload failed'));
    });
  }
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
