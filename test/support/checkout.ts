/**
 * @module test/support/checkout
 * A scratch copy of the checkout for an example to run in as a reader runs
 * it: its own `config/` (a copy of the demo's, which the example may
 * change), package.json, and the rest linked to the repository's (sources,
 * the build, the protos, node_modules). Commands run there with a user's
 * environment: none of the gateway's variables, and no drain on stop.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { userEnvironment } from './package';
import { REPO_ROOT } from './process';

/** What a checkout holds as the repository's own: linked, not copied. */
const LINKED = ['node_modules', 'src', 'dist', 'proto', 'scripts', 'tsconfig.json', 'tsconfig.build.json'];

/** A scratch checkout. */
export interface Checkout {
  readonly dir: string;
  /** Writes `text` to `file`, relative to the checkout. */
  write(file: string, text: string): void;
  remove(): void;
}

/** Makes a scratch checkout. */
export function makeCheckout(): Checkout {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-docs-'));
  copyFileSync(join(REPO_ROOT, 'package.json'), join(dir, 'package.json'));
  for (const name of LINKED) if (existsSync(join(REPO_ROOT, name))) symlinkSync(join(REPO_ROOT, name), join(dir, name));
  cpSync(join(REPO_ROOT, 'config'), join(dir, 'config'), { recursive: true });
  return {
    dir,
    write(file, text) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), text);
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** How a shell command ended. */
export interface ShellRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `command` with bash in `cwd`, with `env` added to a user's environment, to its end or for at most `timeoutMs`. */
export async function runShell(
  command: string,
  cwd: string,
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<ShellRun> {
  const child = spawn('bash', ['-c', command], {
    cwd,
    env: userEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out.stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out.stderr += chunk));
  // The whole group: a command's own children (npm's, a pipeline's) go with it.
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), timeoutMs);
  try {
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, ...out };
  } finally {
    clearTimeout(timer);
  }
}
