/**
 * @module cli/signals
 * Graceful shutdown of a running server on SIGTERM or SIGINT: the first signal
 * stops it and exits 0 once it has stopped; a second one exits at once.
 * SIGHUP reloads, as nginx does and systemd's `ExecReload=kill -HUP` expects.
 * Run by npm, it also stops when the process npm started it through ends.
 */
import { readFileSync } from 'node:fs';

interface Log {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

const quiet: Log = { info: () => undefined, error: (obj) => process.stderr.write(`${JSON.stringify(obj)}\n`) };

/** How often a server run by npm looks for its parent, in ms: a getppid() each time. */
export const PARENT_CHECK_MS = 250;

const STARTING_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
/** The stop signal that came while the server was starting, handled once it runs. */
let heldSignal: NodeJS.Signals | undefined;

function holdWhileStarting(signal: NodeJS.Signals): void {
  // A reload of the files being read for the start has nothing to add.
  if (signal === 'SIGHUP') return;
  // A second stop signal stops at once, as it does once running.
  if (heldSignal !== undefined) process.exit(1);
  heldSignal = signal;
}

/**
 * Holds the signals that come while a server starts (opening its database
 * may take seconds): SIGTERM or SIGINT then stops it gracefully as soon as
 * it runs ({@link runUntilSignal}), and SIGHUP is ignored, where either
 * would otherwise end the process at once, its database half made.
 */
export function holdSignalsWhileStarting(): void {
  for (const signal of STARTING_SIGNALS) process.on(signal, holdWhileStarting);
}

/**
 * Gives the signals back after a start that failed: the process is ending,
 * and a SIGTERM held for a server that will never run would be ignored.
 */
export function stopHoldingSignals(): void {
  for (const signal of STARTING_SIGNALS) process.off(signal, holdWhileStarting);
  heldSignal = undefined;
}

/**
 * Stops with `stop` on the first SIGTERM or SIGINT, then exits; at once
 * when one came while it started (see {@link holdSignalsWhileStarting}). With
 * `reload`, calls it on every SIGHUP until then: SIGHUP would otherwise end
 * the process at once, requests in flight with it. The reload logs what it
 * applied or refused.
 *
 * Run by npm (`npx gatehouse`, an npm script), it stops likewise once its
 * parent has gone: npm runs a command through `sh -c` and passes SIGTERM and
 * SIGINT to that shell alone, which dies of them without passing them on, so
 * a process manager stopping npx would otherwise leave the gateway running,
 * holding its port, with no parent.
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
  /** Stops once; false when it is stopping already. */
  const shutdown = (why: object): boolean => {
    if (stopping) return false;
    stopping = true;
    log.info(why, 'shutting down');
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
    return true;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (!shutdown({ signal })) process.exit(1);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const held = heldSignal;
  stopHoldingSignals();
  if (held !== undefined) shutdown({ signal: held, reason: 'it came while starting' });
  if (process.env.npm_lifecycle_event !== undefined)
    whenParentGone((parent) => shutdown({ parent, reason: 'the npm process that started it is gone' }));
}

/**
 * Calls `gone` once the process that started this one through npm has gone:
 * this process's parent, and when that is npm's `sh -c`, npm itself (read
 * from /proc where there is one). The parent may outlive npm: a shell
 * waits for its command on SIGINT, so npm killed after a SIGINT leaves it
 * behind. Node has no parent-death signal, so both are looked at every
 * {@link PARENT_CHECK_MS}; the timer does not keep the process alive.
 * Nothing is watched when the parent is init already: a process that was
 * started in the background and left.
 */
export function whenParentGone(gone: (parent: number) => void): void {
  const parent = process.ppid;
  if (parent <= 1) return;
  const npm = isShell(parent) ? parentOf(parent) : undefined;
  const timer = setInterval(() => {
    if (process.ppid === parent && (npm === undefined || parentOf(parent) === npm)) return;
    clearInterval(timer);
    gone(parent);
  }, PARENT_CHECK_MS);
  timer.unref();
}

/** Whether `pid` runs a command line of the form `<shell> -c ...`: npm's script shell. */
function isShell(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1] === '-c';
  } catch {
    return false;
  }
}

/** The parent of `pid` from /proc/<pid>/stat; undefined where there is no /proc, or no such process. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name, which may hold spaces and parentheses: the state, then the parent.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}
