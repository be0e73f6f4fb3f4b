/**
 * @module test/support/npm-script
 * An npm script of the repository (`npm start`, `npm run gatehouse -- ...`)
 * run in a process group of its own, as a terminal runs its foreground
 * job: a signal can go to npm's pid alone, as a supervisor sends it, or to
 * the whole group, as Ctrl-C sends it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { GATEHOUSE_ENV, REPO_ROOT, TEST_ENV } from './process';

/** A running npm script. */
export interface NpmScript {
  /** The port its listening line names. */
  readonly port: number;
  /** What npm and the server have written, stdout and stderr together. */
  output(): string;
  /** Sends `signal` to npm's pid alone, as a supervisor does. */
  signalNpm(signal: NodeJS.Signals): void;
  /** Sends `signal` to every process of the group, as a terminal's Ctrl-C (SIGINT) does. */
  signalGroup(signal: NodeJS.Signals): void;
  /** Resolves npm's exit status once it has exited and what the group wrote to its pipes has all been read. */
  exited(): Promise<number | null>;
  /** Kills whatever is left of the group. */
  cleanup(): void;
}

/**
 * Runs `npm <args>` with the gateway's variables cleared but for `env`, and
 * resolves once the server's listening line is out.
 */
export async function npmScript(args: readonly string[], env: Record<string, string>): Promise<NpmScript> {
  const clean = { ...process.env };
  for (const name of GATEHOUSE_ENV) delete clean[name];
  const npm = spawn('npm', args, {
    cwd: REPO_ROOT,
    env: { ...clean, ...TEST_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  // 'close', not 'exit': 'exit' may come while the last lines (the gateway's "gatehouse stopped") are still in the pipe.
  const exit = once(npm, 'close').then(([code]) => code as number | null);
  const cleanup = () => {
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // The group is gone: nothing was left behind.
    }
  };
  let out = '';
  npm.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  npm.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  let match: RegExpExecArray | null = null;
  // However long the start takes: the test's timeout ends a wait that is too long.
  while (!(match = / listening on \S+?:(\d+)/.exec(out))) {
    if (npm.exitCode !== null) {
      cleanup();
      await exit;
      throw new Error(`npm ${args.join(' ')} did not start:\n${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port: Number(match[1]),
    output: () => out,
    signalNpm: (signal) => npm.kill(signal),
    signalGroup: (signal) => process.kill(-npm.pid!, signal),
    exited: () => exit,
    cleanup,
  };
}
