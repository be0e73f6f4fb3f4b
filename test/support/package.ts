/**
 * @module test/support/package
 * The package as a user's project gets it: `npm pack` of the built
 * repository, unpacked into a scratch project's node_modules with its
 * command linked in node_modules/.bin, as npm installs a tarball, and its
 * dependencies linked to the repository's own. Made once per test run, and
 * removed when the run ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { assertBuilt, GATEHOUSE_ENV, LISTENING_LINE, REPO_ROOT, TEST_ENV } from './process';

/** What package.json says of the package's files. */
export interface Manifest {
  main: string;
  types: string;
  bin: Record<string, string>;
  exports: Record<string, string | Record<string, string>>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  files: string[];
}

export const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Manifest;

/** How a command ended and what it wrote. */
export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The variables that would change what a command does: the gateway's, and NODE_OPTIONS, so that no TypeScript loader comes along. */
const CLEARED_ENV = ['NODE_OPTIONS', 'NODE_PATH', ...GATEHOUSE_ENV];

/**
 * The environment of a user's shell: this one without {@link CLEARED_ENV}, nor
 * what npm sets for the script running the tests. A server stops without a
 * drain delay, as in every test that is not about the drain.
 */
export function userEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (CLEARED_ENV.includes(name) || name.startsWith('npm_')) delete env[name];
  return { ...env, LOG_LEVEL: 'silent', ...TEST_ENV, ...extra };
}

/** Runs a command to its end, in a user's environment. */
export async function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<Run> {
  const child = spawn(command, args, { cwd, env: userEnvironment(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out.stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out.stderr += chunk));
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  return { code, signal, ...out };
}

/** Every file under `dir`, relative to it, with `/` between names. */
export function walk(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name), base) : [relative(base, join(dir, e.name)).split('\\').join('/')],
  );
}

/** A user's project with the package installed. */
export interface PackedProject {
  /** The project folder. */
  readonly project: string;
  /** The installed package: `<project>/node_modules/gatehouse`. */
  readonly installed: string;
  /** The tarball `npm pack` made, in the project folder. */
  readonly tarball: string;
  /** The tarball's files, as npm lists them. */
  readonly packed: string[];
}

let made: Promise<PackedProject> | undefined;

/** The scratch project with the package installed, made on the first call. */
export function packedProject(): Promise<PackedProject> {
  made ??= makeProject();
  return made;
}

async function makeProject(): Promise<PackedProject> {
  assertBuilt();
  const project = mkdtempSync(join(tmpdir(), 'gatehouse-package-'));
  process.once('exit', () => rmSync(project, { recursive: true, force: true }));
  // dist/ as the run built it: packing again would rebuild it under the tests' feet.
  const pack = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', project], REPO_ROOT);
  if (pack.code !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
  const [{ filename, files }] = JSON.parse(pack.stdout) as [{ filename: string; files: { path: string }[] }];
  const installed = join(project, 'node_modules', 'gatehouse');
  mkdirSync(installed, { recursive: true });
  const untar = await run('tar', ['xzf', join(project, filename), '-C', installed, '--strip-components=1'], project);
  if (untar.code !== 0) throw new Error(`tar failed:\n${untar.stderr}`);
  // What npm does for a bin: a link in node_modules/.bin, and the file made executable.
  mkdirSync(join(project, 'node_modules', '.bin'));
  for (const [name, file] of Object.entries(manifest.bin)) {
    chmodSync(join(installed, file), 0o755);
    symlinkSync(join('..', 'gatehouse', file), join(project, 'node_modules', '.bin', name));
  }
  // Its dependencies, and what the user's own code uses (koa, koa-mount and their types), as the repository has them.
  for (const name of readdirSync(join(REPO_ROOT, 'node_modules'))) {
    if (!name.startsWith('.') && name !== 'gatehouse')
      symlinkSync(join(REPO_ROOT, 'node_modules', name), join(project, 'node_modules', name));
  }
  return { project, installed, tarball: join(project, filename), packed: files.map((f) => f.path) };
}

/** A server command started with {@link startServer}. */
export interface StartedServer {
  /** The process started: the command itself, or npm or npx in front of it. */
  readonly child: ChildProcess;
  /** The URL from its listening line. */
  readonly url: string;
  /** Everything it has written so far, stdout and stderr together. */
  output(): string;
  /** Resolves how the process started ended, once it has. */
  ended(): Promise<Run>;
}

/** Process groups started here and not yet ended, ended when the test run ends. */
const groups = new Set<number>();
process.once('exit', () => {
  for (const pid of groups) killGroup(pid);
});

/** SIGKILL to the whole process group `pid` leads: whatever a test left behind. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

/** Whether a process of group `pid` is still running. */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts a server command (`npx gatehouse start`, `npm start`, `node .../main.js
 * start`) in a process group of its own, as a process manager would, and
 * resolves once it has printed its listening line. However long that takes:
 * the test's timeout ends a start that never comes. Signals sent by the test
 * go to the child's pid alone, as a process manager sends them.
 */
export async function startServer(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<StartedServer> {
  const child = spawn(command, args, {
    cwd,
    env: userEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  groups.add(child.pid!);
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const closed = once(child, 'close').then(([code, signal]) => {
    if (!groupAlive(child.pid!)) groups.delete(child.pid!);
    return { code, signal, stdout: out, stderr: err };
  });
  const url = await new Promise<string>((resolve, reject) => {
    const look = () => {
      const match = LISTENING_LINE.exec(out);
      if (match) resolve(match[2]);
    };
    child.stdout.on('data', look);
    void closed.then((ran) =>
      reject(
        new Error(`${command} ${args.join(' ')} ended (${ran.signal ?? ran.code}) before listening:\n${out}${err}`),
      ),
    );
  });
  return { child, url, output: () => out + err, ended: () => closed };
}
