/**
 * @module test/support/process
 * The `gatehouse` command as a user runs it: a child process of
 * `node dist/cli/main.js`, the compiled command `npm start` runs (`npm test`
 * builds it first), in the repository, with an environment cleaned of the
 * variables that would change what it does. `runCli` waits for
 * a command that ends; `startCli` waits for a server's "<name> listening on
 * <address>" line and parses the address. Every process started is tracked,
 * so that one `after` hook stops them all.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import net from 'node:net';
import { join } from 'node:path';
import { OPTION_VARIABLES } from '../../src/gatehouse/options';
import { releaseDataDir, reusableDataDir } from './pglite';

/** The repository root, the working directory of every command. */
export const REPO_ROOT = join(__dirname, '..', '..');

const MAIN = join('dist', 'cli', 'main.js');

/** The newest modification time of the files under `dir`, in ms. */
function newest(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((latest, entry) => {
    const path = join(dir, entry.name);
    return Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }, 0);
}

let checkedBuild = false;

/**
 * Throws unless dist/ was built from the sources as they are: a command run
 * from an older build would test code that is no longer there.
 */
export function assertBuilt(): void {
  if (checkedBuild) return;
  let built: number;
  try {
    built = statSync(join(REPO_ROOT, MAIN)).mtimeMs;
  } catch {
    throw new Error('dist/ is not built: run npm run build (npm test does)');
  }
  const changed = Math.max(newest(join(REPO_ROOT, 'src')), statSync(join(REPO_ROOT, 'package.json')).mtimeMs);
  if (changed > built) throw new Error('dist/ is older than src/: run npm run build (npm test does)');
  checkedBuild = true;
}

/** The gateway's variables, which would change what a command does; a test sets the ones it means. */
export const GATEHOUSE_ENV: readonly string[] = OPTION_VARIABLES;

/**
 * Set unless a test sets it: a server stops without its drain delay, so
 * that a test that stops one waits for no load balancer. Tests of the drain
 * set their own.
 */
export const TEST_ENV = { DRAIN_DELAY_MS: '0' };

/** A server's announcement on standard output: `<name> listening on <address>[ ...]`, a whole line. */
export const LISTENING_LINE = /^(\S+) listening on (\S+)[^\n]*\n/m;

/** `gatehouse start`'s word, once it listens, that its bookings database is open. */
export const BOOKINGS_OPEN_LINE = /^gatehouse bookings open \([^\n]*\)\n/m;

export interface CliOptions {
  /** Added to the cleaned environment. */
  env?: Record<string, string>;
  /**
   * Give up after this long. By default a command runs as long as the test
   * lets it: the test's own timeout ends a command that hangs.
   */
  timeoutMs?: number;
  /** The compiled command to run, for another install of the package. Default the repository's `dist/cli/main.js`. */
  main?: string;
  /** node's own options, given before the command (`--require`, V8 flags). */
  nodeArgs?: readonly string[];
  /** A program node runs under, with its arguments: `['taskset', '-c', '0']`. */
  under?: readonly string[];
  /**
   * `gatehouse start` serves while its bookings database opens, and says
   * when it is open: by default {@link startCli} waits for that too (unless
   * its listening line says there are none). `false`: it hands the server
   * over as soon as it listens.
   */
  untilBookingsOpen?: boolean;
}

/** How a command ended and what it wrote. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A server started with {@link startCli}. */
export interface CliServer {
  readonly child: ChildProcess;
  /** The name the server announced itself with (`api`, `ratelimit`, `gatehouse`...). */
  readonly name: string;
  /** The address from the listening line: `http://127.0.0.1:PORT` or, for gRPC, `127.0.0.1:PORT`. */
  readonly address: string;
  readonly port: number;
  /** The whole listening line. */
  readonly line: string;
  /** What it has written so far. */
  output(): { stdout: string; stderr: string };
  /**
   * SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves how
   * it ended. The default grace is a minute: a process ends only once V8's
   * background work is done (on Node 24, optimising PGlite's WebAssembly
   * after a booking took seconds on a loaded machine), and only a stop that
   * hangs should end in SIGKILL.
   */
  stop(graceMs?: number): Promise<CliResult>;
}

/** How long {@link CliServer.stop} waits after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 60_000;

const running = new Set<ChildProcess>();

/**
 * `options` for a server that keeps bookings: `GATEHOUSE_DATA` set to a
 * folder of its own (handed back by `release` once it has exited) unless the
 * test named a store.
 */
async function withDataDir(
  args: readonly string[],
  options: CliOptions,
): Promise<{ options: CliOptions; release?: () => void }> {
  const keepsBookings =
    args[0] === 'start' || (args[0] === 'serve' && (args[1] === 'hotel-booking' || args[1] === 'car-booking'));
  if (!keepsBookings) return { options };
  const named = args.some(
    (a) => a === '--data' || a === '--database-url' || a.startsWith('--data=') || a.startsWith('--database-url='),
  );
  const env = options.env ?? {};
  if (named || env.GATEHOUSE_DATA !== undefined || env.DATABASE_URL !== undefined) return { options };
  const dir = await reusableDataDir();
  return { options: { ...options, env: { ...env, GATEHOUSE_DATA: dir } }, release: () => releaseDataDir(dir) };
}

function environment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of GATEHOUSE_ENV) delete env[name];
  return { ...env, ...TEST_ENV, ...extra };
}

function spawnCli(
  args: readonly string[],
  options: CliOptions,
): { child: ChildProcess; out: { stdout: string; stderr: string } } {
  assertBuilt();
  const line = [...(options.under ?? []), process.execPath, ...(options.nodeArgs ?? []), options.main ?? MAIN, ...args];
  const child = spawn(line[0], line.slice(1), {
    cwd: REPO_ROOT,
    env: environment(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out.stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out.stderr += chunk));
  return { child, out };
}

/** Resolves once the child has exited and its output streams are drained. */
async function ended(child: ChildProcess, out: { stdout: string; stderr: string }): Promise<CliResult> {
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  // 'close' follows 'exit' once stdout and stderr are drained; it may have fired already.
  if (child.stdout!.readable || child.stderr!.readable) await once(child, 'close');
  return { code: child.exitCode, signal: child.signalCode, ...out };
}

function describeOutput(out: { stdout: string; stderr: string }): string {
  return `stdout:\n${out.stdout || '(nothing)'}\nstderr:\n${out.stderr || '(nothing)'}`;
}

/** Runs a command that ends (help, check, a start that fails) and resolves its exit and output. */
export async function runCli(args: readonly string[], given: CliOptions = {}): Promise<CliResult> {
  const { options, release } = await withDataDir(args, given);
  const { child, out } = spawnCli(args, options);
  if (release) child.once('exit', release);
  const timeoutMs = options.timeoutMs;
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    const result = await ended(child, out);
    if (result.signal === 'SIGKILL')
      throw new Error(`gatehouse ${args.join(' ')} did not end within ${timeoutMs} ms\n${describeOutput(out)}`);
    return result;
  } finally {
    clearTimeout(timer);
  }
}

/** Starts a command and hands it over at once, before it says anything: for what is sent to it while it starts. */
export async function spawnedCli(
  args: readonly string[],
  given: CliOptions = {},
): Promise<{ child: ChildProcess; ended(): Promise<CliResult> }> {
  const { options, release } = await withDataDir(args, given);
  const { child, out } = spawnCli(args, options);
  if (release) child.once('exit', release);
  return { child, ended: () => ended(child, out) };
}

/**
 * Starts a server command and resolves once it has printed its listening
 * line. Rejects with its output when it exits first or is not listening
 * within the timeout (and then kills it).
 */
export async function startCli(args: readonly string[], given: CliOptions = {}): Promise<CliServer> {
  const { options, release } = await withDataDir(args, given);
  const { child, out } = spawnCli(args, options);
  if (release) child.once('exit', release);
  const timeoutMs = options.timeoutMs;
  /** Resolves the first match of `pattern` in the output, once it is written; rejects (and kills it) if the process exits first. */
  const written = (pattern: RegExp, what: string) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const fail = (why: string) => {
        cleanup();
        child.kill('SIGKILL');
        reject(new Error(`gatehouse ${args.join(' ')} ${why}\n${describeOutput(out)}`));
      };
      const onData = () => {
        const match = pattern.exec(out.stdout);
        if (match) {
          cleanup();
          resolve(match);
        }
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
        fail(`exited (${signal ?? code}) before ${what}`);
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => fail(`was not ${what} within ${timeoutMs} ms`), timeoutMs);
      function cleanup() {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.off('exit', onExit);
      }
      child.stdout!.on('data', onData);
      child.once('exit', onExit);
      onData();
    });
  const line = await written(LISTENING_LINE, 'listening');
  if (args[0] === 'start' && options.untilBookingsOpen !== false && !/; bookings: (none|memory)/.test(line[0]))
    await written(BOOKINGS_OPEN_LINE, 'with its bookings database open');
  const address = line[2];
  const port = Number(/:(\d+)$/.exec(address)?.[1]);
  if (!Number.isInteger(port)) throw new Error(`no port in the listening line '${line[0]}'`);

  return {
    child,
    name: line[1],
    address,
    port,
    line: line[0].trimEnd(),
    output: () => ({ ...out }),
    async stop(graceMs = STOP_GRACE_MS) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        try {
          return await ended(child, out);
        } finally {
          clearTimeout(timer);
        }
      }
      return ended(child, out);
    },
  };
}

/** Kills every process started here that is still running, and waits for them to exit. For `after` hooks. */
/** A copy of the package as built, for a {@link CliOptions.main}: `main` its command, `remove()` once done. */
export interface Install {
  readonly main: string;
  remove(): void;
}

/**
 * The package as built without its `proto` folder, as a bundle that left it
 * out would be: the gRPC server's protos are the first file read after a
 * start has opened its bookings database and its Redis client.
 */
export async function installWithoutProtos(): Promise<Install> {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-install-'));
  // Not cpSync for dist: megabytes copied on the event loop would stall the servers of the tests running beside.
  await cp(join(REPO_ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  cpSync(join(REPO_ROOT, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
  return { main: join(dir, MAIN), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function killAll(): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }),
  );
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
