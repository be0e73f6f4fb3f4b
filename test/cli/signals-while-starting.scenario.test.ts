import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../support/polling';
import { freshDataDir } from '../support/pglite';
import { killAll, REPO_ROOT, spawnedCli, type CliResult } from '../support/process';

/**
 * Whether process `pid` has handlers of its own for SIGHUP, SIGINT and
 * SIGTERM (SigCgt in /proc/<pid>/status). Node's own start-up comes before
 * any script of it runs, and meanwhile every signal has its default
 * action, which Node itself resets at start: that is the first moment a
 * process run by node can catch anything.
 */
function catchesSignals(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const caught = BigInt(`0x${/^SigCgt:\s*([0-9a-f]+)$/m.exec(status)![1]}`);
    return [1, 2, 15].every((signal) => ((caught >> BigInt(signal - 1)) & 1n) === 1n);
  } catch {
    return false;
  }
}

/** A first start of the gateway: a data folder no gateway has opened, a config folder of its own, the log at info. */
interface Starting {
  readonly child: ChildProcess;
  readonly data: string;
  readonly config: string;
  /** The lines it has written on standard output so far. */
  lines(): string[];
  ended(): Promise<CliResult>;
}

/**
 * Starts the gateway on a copy of the config folder. `emptyData` gives it a
 * data folder with no database yet, which it makes after reading the
 * config folder and before it listens: seconds on any machine.
 */
async function firstStart(emptyData = false): Promise<Starting> {
  const config = mkdtempSync(join(tmpdir(), 'gatehouse-signals-'));
  cpSync(join(REPO_ROOT, 'config'), config, { recursive: true });
  const data = emptyData ? mkdtempSync(join(tmpdir(), 'gatehouse-data-')) : await freshDataDir();
  const { child, ended } = await spawnedCli(['start', '--config', config, '--data', data, '--no-watch'], {
    env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'info' },
  });
  let out = '';
  child.stdout!.on('data', (chunk: string) => (out += chunk));
  return { child, data, config, lines: () => out.split('\n').slice(0, -1), ended };
}

/** A moment of a start, reached when `reached` resolves: a signal is sent then, whatever the start is doing. */
interface Moment {
  readonly name: string;
  reached(start: Starting): Promise<void>;
}

/** Rejects, with what it wrote, once the process has ended. */
function endOf(start: Starting, what: string): Promise<never> {
  return new Promise((_resolve, reject) => {
    const fail = () => reject(new Error(`the process ended before ${what}:\n${start.lines().join('\n')}`));
    if (start.child.exitCode !== null || start.child.signalCode !== null) fail();
    else start.child.once('exit', fail);
  });
}

/** Resolves once `done` holds, looked at on every turn of the event loop: for what shows in /proc, not in the output. */
function until(start: Starting, done: () => boolean, what: string): Promise<void> {
  const held = new Promise<void>((resolve) => {
    const look = () => (done() ? resolve() : start.child.exitCode === null && setImmediate(look));
    look();
  });
  return Promise.race([held, endOf(start, what)]);
}

/** Resolves once `done` holds, looked at as each piece of output comes. */
function untilOutput(start: Starting, done: () => boolean, what: string): Promise<void> {
  const held = new Promise<void>((resolve) => {
    const look = () => {
      if (!done()) return;
      start.child.stdout!.off('data', look);
      resolve();
    };
    start.child.stdout!.on('data', look);
    look();
  });
  return Promise.race([held, endOf(start, what)]);
}

const AS_SOON_AS_IT_CATCHES: Moment = {
  name: 'as soon as it catches signals, before it writes anything',
  reached: (start) => until(start, () => catchesSignals(start.child.pid!), 'it caught signals'),
};

/** After the `n`th line of its log: a first start writes four (the migration, two seedings, the users) before it listens. */
function afterLine(n: number): Moment {
  return {
    name: `after line ${n} of its log`,
    reached: (start) => untilOutput(start, () => start.lines().length >= n, `line ${n}`),
  };
}

const MOMENTS = [AS_SOON_AS_IT_CATCHES, afterLine(1), afterLine(2), afterLine(3), afterLine(4)];

describe('gatehouse start, signalled while it starts for the first time', function () {
  // First starts, one after another, on a machine other tests load: the timeout only ends a hang.
  this.timeout(600_000);
  const folders: string[] = [];
  after(async () => {
    await killAll();
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  });

  /** Starts, sends `signal` at `moment`, and resolves how it ended. */
  async function stopAt(moment: Moment, signal: NodeJS.Signals): Promise<{ start: Starting; res: CliResult }> {
    const start = await firstStart();
    folders.push(start.config);
    await moment.reached(start);
    start.child.kill(signal);
    return { start, res: await start.ended() };
  }

  for (const moment of MOMENTS) {
    it(`stops cleanly, with exit 0, on SIGTERM or SIGINT ${moment.name}, its data folder unlocked`, async () => {
      const runs = await Promise.all([stopAt(moment, 'SIGTERM'), stopAt(moment, 'SIGINT')]);
      for (const [{ start, res }, signal] of [
        [runs[0], 'SIGTERM'],
        [runs[1], 'SIGINT'],
      ] as const) {
        const said = `${signal} ${moment.name}:\n${res.stdout}${res.stderr}`;
        assert.equal(res.signal, null, said);
        assert.equal(res.code, 0, said);
        assert.equal(res.stderr, '', said);
        assert.match(res.stdout, new RegExp(`"signal":"${signal}"[^\\n]*"msg":"shutting down"`), said);
        assert.match(res.stdout, /"msg":"gatehouse stopped"\}\n$/, said);
        assert.doesNotMatch(res.stdout, /stopping at once/, said);
        assert.equal(existsSync(join(start.data, 'gatehouse.pid')), false, `the data folder is unlocked: ${said}`);
        // Before anything was loaded, the start gives up before it opens the database.
        if (moment === AS_SOON_AS_IT_CATCHES) assert.doesNotMatch(res.stdout, /bookings database migrated/, said);
      }
    });
  }

  it('lives through SIGHUP at every moment of its start, and applies it once it serves: a reload of what changed meanwhile', async () => {
    const start = await firstStart(true);
    folders.push(start.config, start.data);
    const listening = () => start.lines().some((line) => line.startsWith('gatehouse listening on '));
    let changed = false;
    for (const moment of MOMENTS) {
      await moment.reached(start);
      if (listening()) break;
      // Once the folder has been read (the database comes after it), a change is one the start did not see.
      if (moment !== AS_SOON_AS_IT_CATCHES) {
        changed = true;
        writeFileSync(
          join(start.config, 'extra.yaml'),
          'apiVersion: gateway/v1\nkind: Mapping\nname: extra\nprefix: /extra/\nrewrite: /v1/\nservice: api\nbypass_auth: true\n',
        );
      }
      start.child.kill('SIGHUP');
    }
    // The first line ('making the bookings database') comes before the seconds that making it takes.
    assert.ok(changed, `the folder was changed before it listened:\n${start.lines().join('\n')}`);
    await untilOutput(start, listening, 'it listened');
    const url = /^gatehouse listening on (\S+)/m.exec(start.lines().join('\n'))![1];
    // Watching nothing (--no-watch): only the SIGHUP kept from the start reads the new file.
    await eventually(
      async () => ((await fetch(`${url}/extra/messages/1`)).status === 200 ? true : undefined),
      'the Mapping the kept SIGHUP reloaded',
    );
    assert.ok(
      start
        .lines()
        .some((line) =>
          /"signal":"SIGHUP","reason":"it came while starting","msg":"reloading the config folder"/.test(line),
        ),
      start.lines().join('\n'),
    );
    start.child.kill('SIGTERM');
    const res = await start.ended();
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.match(res.stdout, /"msg":"gatehouse stopped"/);
  });
});
