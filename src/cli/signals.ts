/**
 * @module cli/signals
 * The signals of a server command, caught from the first moment of the
 * process (see ./main) and acted on as they are once it serves:
 *
 * - SIGTERM or SIGINT stops it gracefully and exits 0. While it starts,
 *   the start gives up (what it opened is closed, no port is served).
 * - Another SIGTERM or SIGINT a second or more after the first stops it at
 *   once (exit 1). One within that second is the same stop: Ctrl-C in a
 *   terminal signals every process of the foreground group, npm and the
 *   gateway alike, and npm passes its own on, so one press arrives twice;
 *   systemd signals every process of a unit the same way.
 * - SIGHUP reloads, as nginx does and systemd's `ExecReload=kill -HUP`
 *   expects; one that comes while it starts is kept, and the reload done
 *   once it serves.
 *
 * Run by npm, it also stops when the process npm started it through ends.
 */
import { readFileSync } from 'node:fs';

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** How often a server run by npm looks for its parent, in ms: a getppid() each time. */
export const PARENT_CHECK_MS = 250;

/** How long after a first SIGTERM or SIGINT another one is the same stop, in ms; a later one stops at once. */
export const SAME_STOP_MS = 1000;

const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

/** What the signals act on once the server runs. */
export interface Serving {
  /** Stops gracefully; the process exits once it resolves. */
  stop(): Promise<void>;
  /** Reloads the config; logs what it applied or refused, never rejects for a fault of the files. */
  reload(): Promise<unknown>;
}

/** The signals of a server command, from the first moment of the process to its end. */
export interface ServerSignals {
  /** Aborted by the first SIGTERM or SIGINT: a start under way gives up. */
  readonly stopping: AbortSignal;
  /** Logs what the signals do through `log` from now on, and what they did before it was there. */
  useLogger(log: Log): void;
  /**
   * Hands the signals to the running server: a stop asked for while it
   * started begins now, and a SIGHUP that came meanwhile reloads.
   */
  serve(server: Serving): void;
  /** Gives the signals back, after a start that failed: the process is ending. */
  release(): void;
}

/**
 * Catches SIGTERM, SIGINT and SIGHUP for a server command. Call it before
 * anything else is loaded: until then a signal's default action ends the
 * process (for SIGHUP, silently), its data folder half made.
 */
export function catchServerSignals(): ServerSignals {
  const stopping = new AbortController();
  let log: Log | undefined;
  /** Lines for the log, kept until there is one. */
  const held: [keyof Log, object, string][] = [];
  const say = (level: keyof Log, obj: object, msg: string) =>
    log ? log[level](obj, msg) : held.push([level, obj, msg]);
  let server: Serving | undefined;
  let firstStopAt: number | undefined;
  let reloadsWaiting = 0;

  /** Stops the server, then the process. */
  const stop = () => {
    server!.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        say('error', { err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const shutdown = (why: object) => {
    say('info', why, 'shutting down');
    stop();
  };
  const onStop = (signal: NodeJS.Signals) => {
    const now = performance.now();
    if (firstStopAt === undefined) {
      firstStopAt = now;
      stopping.abort(new Error(`stopped by ${signal}`));
      if (server) shutdown({ signal });
      else say('info', { signal, reason: 'it came while starting' }, 'shutting down');
    } else if (now - firstStopAt >= SAME_STOP_MS) {
      say('warn', { signal }, 'stopping at once: a second signal');
      process.exit(1);
    }
  };
  const onReload = (signal: NodeJS.Signals) => {
    if (firstStopAt !== undefined) return;
    if (!server) {
      reloadsWaiting++;
      return;
    }
    say('info', { signal }, 'reloading the config folder');
    reload(server);
  };
  const reload = (running: Serving) => {
    // A signal handler that throws, at once or later, would end the process.
    Promise.resolve()
      .then(() => running.reload())
      .catch((err: unknown) => say('error', { err }, 'reload failed'));
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onStop);
  process.on('SIGHUP', onReload);

  return {
    stopping: stopping.signal,
    useLogger(logger) {
      log = logger;
      for (const [level, obj, msg] of held.splice(0)) log[level](obj, msg);
    },
    serve(running) {
      server = running;
      // Said as it came: 'shutting down', 'it came while starting'.
      if (firstStopAt !== undefined) {
        stop();
        return;
      }
      if (reloadsWaiting > 0) {
        say('info', { signal: 'SIGHUP', reason: 'it came while starting' }, 'reloading the config folder');
        reload(running);
      }
      if (process.env.npm_lifecycle_event !== undefined)
        whenParentGone((parent) => {
          if (firstStopAt !== undefined) return;
          firstStopAt = performance.now();
          shutdown({ parent, reason: 'the npm process that started it is gone' });
        });
    },
    release() {
      for (const signal of STOP_SIGNALS) process.off(signal, onStop);
      process.off('SIGHUP', onReload);
    },
  };
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
