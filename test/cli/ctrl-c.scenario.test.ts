import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SAME_STOP_MS } from '../../src/cli/signals';
import { freshDataDir } from '../support/pglite';
import { acceptsConnections, killAll, LISTENING_LINE, REPO_ROOT, spawnedCli } from '../support/process';
import { npmScript, type NpmScript } from '../support/npm-script';

/** The lines of `output` whose message is one of `messages`, in order, by message. */
function messages(output: string): string[] {
  return [...output.matchAll(/"msg":"([^"]*)"/g)].map((m) => m[1]);
}

/** Resolves once `output()` matches `pattern`: the test's timeout ends a wait for what never comes. */
async function until(output: () => string, pattern: RegExp): Promise<void> {
  while (!pattern.test(output())) await sleep(20);
}

describe('Ctrl-C on npm start, as a terminal sends it to the whole foreground process group', function () {
  // A first start through npm, on a machine other tests load: the timeout only ends a hang.
  this.timeout(600_000);
  let config: string;
  let script: NpmScript | undefined;
  beforeEach(() => {
    config = mkdtempSync(join(tmpdir(), 'gatehouse-ctrl-c-'));
    cpSync(join(REPO_ROOT, 'config'), config, { recursive: true });
  });
  afterEach(() => {
    script?.cleanup();
    script = undefined;
    rmSync(config, { recursive: true, force: true });
  });
  after(killAll);

  /** `npm start` on a config folder and a data folder of its own, draining `drainMs` on a stop. */
  async function npmStart(drainMs: number): Promise<NpmScript> {
    script = await npmScript(['start'], {
      PORT: '0',
      GRPC_PORT: '0',
      LOG_LEVEL: 'info',
      GATEHOUSE_CONFIG: config,
      GATEHOUSE_DATA: await freshDataDir(),
      DRAIN_DELAY_MS: String(drainMs),
    });
    return script;
  }

  it('drains, then stops with exit 0 and "gatehouse stopped", though npm passes its own SIGINT on', async () => {
    const npm = await npmStart(3000);
    npm.signalGroup('SIGINT');
    await until(npm.output, /"msg":"draining/);
    // Draining: still answering, but no longer ready, so that a load balancer sends elsewhere.
    const ready = await fetch(`http://127.0.0.1:${npm.port}/gateway/v0/check_ready`);
    assert.equal(ready.status, 503);
    assert.equal(ready.headers.get('connection'), 'close');
    await ready.text();
    assert.equal(await npm.exited(), 0, npm.output());
    const said = messages(npm.output());
    assert.deepEqual(
      said
        .filter((m) => /^(shutting down|draining|drained|gatehouse stopped|stopping at once)/.test(m))
        .map((m) => m.split(':')[0]),
      ['shutting down', 'draining', 'drained', 'gatehouse stopped'],
      npm.output(),
    );
    assert.match(npm.output(), /"signal":"SIGINT","msg":"shutting down"/);
    assert.equal(await acceptsConnections(npm.port), false);
  });

  it('stops at once with exit 1 on a second Ctrl-C pressed a second or more after the first', async () => {
    const npm = await npmStart(600_000);
    npm.signalGroup('SIGINT');
    // Counted from when the gateway said it: its clock began no later.
    await until(npm.output, /"msg":"shutting down"/);
    await sleep(SAME_STOP_MS + 200);
    npm.signalGroup('SIGINT');
    assert.equal(await npm.exited(), 1, npm.output());
    assert.match(npm.output(), /"signal":"SIGINT","msg":"stopping at once: a second signal"/);
    assert.doesNotMatch(npm.output(), /gatehouse stopped/);
  });
});

describe('the gateway, told to stop twice at one moment', () => {
  after(killAll);

  it('takes two SIGINTs sent together as one stop, and drains', async () => {
    const { child, ended } = await spawnedCli(['start', '--port', '0', '--grpc-port', '0', '--no-watch'], {
      env: { LOG_LEVEL: 'info', DRAIN_DELAY_MS: '1000' },
    });
    let out = '';
    child.stdout!.on('data', (chunk: string) => (out += chunk));
    await until(() => out, LISTENING_LINE);
    child.kill('SIGINT');
    child.kill('SIGINT');
    const res = await ended();
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.deepEqual(
      messages(res.stdout)
        .filter((m) => /^(shutting down|draining|drained|gatehouse stopped|stopping at once)/.test(m))
        .map((m) => m.split(':')[0]),
      ['shutting down', 'draining', 'drained', 'gatehouse stopped'],
    );
  });
});
