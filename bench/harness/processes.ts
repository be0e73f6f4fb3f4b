/**
 * @module bench/harness/processes
 * The server processes of the benchmark: each started pinned to a CPU
 * (`taskset -c`), its whole process tree found in /proc (nginx's workers,
 * say), its CPU time read from /proc/<pid>/stat, frozen (SIGSTOP) while
 * other deployments are measured and thawed (SIGCONT) for its own turn, and
 * killed, tree and all, when the benchmark ends or dies.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { delimiter, join } from 'node:path';

/** What the benchmark runs, with the Debian package that brings it. */
const TOOLS: Record<string, string> = {
  taskset: 'util-linux',
  wrk: 'wrk',
  nginx: 'nginx',
  haproxy: 'haproxy',
  'redis-server': 'redis-server',
  h2load: 'nghttp2-client',
};

/** Where Debian puts nginx and haproxy, which a user's PATH may leave out. */
const SYSTEM_DIRS = ['/usr/sbin', '/sbin'];

function findIn(dirs: readonly string[], tool: string): string | undefined {
  return dirs.find((dir) => {
    try {
      accessSync(join(dir, tool), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Whether `tool` is on the PATH; one found only in /usr/sbin or /sbin puts that folder on the PATH of this process and its children. */
function onPath(tool: string): boolean {
  const path = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  if (findIn(path, tool)) return true;
  const dir = findIn(SYSTEM_DIRS, tool);
  if (dir) process.env.PATH = [...path, dir].join(delimiter);
  return dir !== undefined;
}

/**
 * Throws, naming each missing tool and its Debian package, unless every one
 * of `tools` is on the PATH and the machine has the two CPUs the method
 * pins to.
 */
export function requireTools(tools: readonly string[]): void {
  const missing = tools.filter((tool) => !onPath(tool));
  if (missing.length) {
    const packages = [...new Set(missing.map((tool) => TOOLS[tool] ?? tool))];
    throw new Error(
      `the benchmark needs ${missing.join(', ')}, found neither on the PATH nor in /usr/sbin: apt-get install ${packages.join(' ')}`,
    );
  }
  if (os.cpus().length < 2)
    throw new Error('the benchmark pins the servers to CPU 0 and the load to CPU 1: it needs 2 CPUs');
}

const CLOCK_TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces): [state, ppid, ...]. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** `roots` and every process descending from them. */
export function processTree(roots: readonly number[]): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const ppid = Number(statFields(Number(entry))?.[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid)!.push(Number(entry));
  }
  const tree: number[] = [];
  const queue = [...roots];
  while (queue.length) {
    const pid = queue.shift()!;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** The CPU time (user + system) `pids` have used so far, in microseconds. */
export function cpuMicros(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const fields = statFields(pid);
    // utime and stime are the 14th and 15th fields of the line, 12th and 13th after the name.
    if (fields) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1e6) / CLOCK_TICKS_PER_SECOND;
}

/** When `pid` started (in clock ticks after boot): with the pid, who it is, since pids are reused. */
function startTime(pid: number): string | undefined {
  // starttime is the 22nd field of the line, the 20th after the name.
  return statFields(pid)?.[19];
}

/** `pids` with their start times, so that a signal never reaches a process that took a pid over. */
export type Identities = ReadonlyMap<number, string>;

export function identify(pids: readonly number[]): Identities {
  const ids = new Map<number, string>();
  for (const pid of pids) {
    const start = startTime(pid);
    if (start !== undefined) ids.set(pid, start);
  }
  return ids;
}

/** Sends `signal` to each of `processes` that is still the process identified, ignoring those gone. */
export function signalAll(processes: Identities, signal: NodeJS.Signals): void {
  for (const [pid, start] of processes) {
    if (startTime(pid) !== start) continue;
    try {
      process.kill(pid, signal);
    } catch {
      // Gone already.
    }
  }
}

/** One command of a deployment, started pinned. */
export interface ProcessSpec {
  /** What the process is, in messages. */
  name: string;
  command: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where its standard output goes (appended): an access log file or /dev/null. Default /dev/null. */
  stdout?: string;
  /** The port it serves HTTP on, to wait for. */
  port: number;
  /** A path that answers 200 once it is ready for load, waited for after it serves; none: serving is ready. */
  readyPath?: string;
}

/** A started process. */
export interface Pinned {
  readonly spec: ProcessSpec;
  readonly child: ChildProcess;
  /** The last few KiB of what it wrote on standard error. */
  stderr(): string;
}

const started = new Set<ChildProcess>();
/** Every process seen in a started process's tree, so that nothing stays behind, even stopped. */
const seen = new Map<number, string>();

function killEverything(): void {
  const live = identify(processTree([...started].map((c) => c.pid!).filter(Boolean)));
  signalAll(new Map([...seen, ...live]), 'SIGKILL');
}
process.on('exit', killEverything);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killEverything();
    process.exit(130);
  });
}

/** Starts `spec` with `taskset -c <cpu>`. */
export function startPinned(spec: ProcessSpec, cpu: number | string): Pinned {
  const out = openSync(spec.stdout ?? '/dev/null', 'a');
  let err = '';
  let child: ChildProcess;
  try {
    child = spawn('taskset', ['-c', String(cpu), spec.command, ...spec.args], {
      stdio: ['ignore', out, 'pipe'],
      env: spec.env ?? process.env,
      cwd: spec.cwd,
    });
  } finally {
    closeSync(out);
  }
  started.add(child);
  child.once('exit', () => started.delete(child));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    err = (err + chunk).slice(-4096);
  });
  return { spec, child, stderr: () => err };
}

/** The status `path` answers on `port`, 0 when nothing answers. */
function statusOf(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(0));
  });
}

/**
 * Resolves once `process` answers HTTP on its port, and 200 on its
 * `readyPath` when it has one; throws with its standard error if it exits
 * first or takes 90 s.
 */
export async function waitUntilServing(pinned: Pinned): Promise<void> {
  const { port, readyPath } = pinned.spec;
  const ready = async () => (readyPath ? (await statusOf(port, readyPath)) === 200 : (await statusOf(port, '/')) !== 0);
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (pinned.child.exitCode !== null || pinned.child.signalCode !== null) {
      throw new Error(
        `${pinned.spec.name} exited (${pinned.child.exitCode ?? pinned.child.signalCode}) before serving: ${pinned.stderr().trim()}`,
      );
    }
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const what = readyPath ? `answer 200 on ${readyPath}` : 'serve';
  throw new Error(`${pinned.spec.name} did not ${what} on port ${port} within 90 s: ${pinned.stderr().trim()}`);
}

/** Remembers `processes` so that they are killed at exit whatever happens. */
export function track(processes: Identities): void {
  for (const [pid, start] of processes) seen.set(pid, start);
}

/** Thaws, terminates and, after 5 s, kills `processes` and their trees. */
export async function stopAll(processes: readonly Pinned[]): Promise<void> {
  const live = processes.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
  const tree = identify(processTree(live.map((p) => p.child.pid!)));
  signalAll(tree, 'SIGCONT');
  signalAll(tree, 'SIGTERM');
  const exited = live.map((p) => new Promise<void>((resolve) => p.child.once('exit', () => resolve())));
  const timer = setTimeout(() => signalAll(tree, 'SIGKILL'), 5000);
  await Promise.all(exited);
  clearTimeout(timer);
  // Workers of a master that went first (nginx's) must not stay behind.
  signalAll(tree, 'SIGKILL');
}
