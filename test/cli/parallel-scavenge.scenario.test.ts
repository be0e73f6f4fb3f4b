/**
 * @module test/cli/parallel-scavenge
 * `--parallel-scavenge` (`PARALLEL_SCAVENGE`): `gatehouse start` and
 * `gatehouse serve` collect
 * the young generation on the thread that allocated alone where it may use
 * one CPU (`auto`) or when told `off`, keeps V8's helper threads when told
 * `on` or given more CPUs, and leaves V8 as node was told when node was
 * given a flag of its own.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAll, startCli, type CliOptions } from '../support/process';

const ROUTES =
  'apiVersion: gateway/v1\nkind: Mapping\nname: api\nprefix: /v1/\nrewrite: ""\nservice: api\nbypass_auth: true\n';
const SAID = 'V8 scavenges on the thread that allocated alone';
/** Whether `taskset` can hold a process to one CPU here. */
const TASKSET = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

describe('gatehouse start and serve --parallel-scavenge', function () {
  let config: string;
  before(() => {
    config = mkdtempSync(join(tmpdir(), 'gatehouse-parallel-scavenge-'));
    writeFileSync(join(config, 'routes.yaml'), ROUTES);
  });
  afterEach(killAll);
  after(() => rmSync(config, { recursive: true, force: true }));

  /** The line it logs when it turns the helpers off, or undefined, once it serves: `args` after `start`. */
  async function scavengeLine(
    args: readonly string[],
    given: CliOptions = {},
  ): Promise<Record<string, unknown> | undefined> {
    const env = { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'debug', ...given.env };
    const server = await startCli(['start', '--config', config, '--no-watch', ...args], { ...given, env });
    const answer = await fetch(`${server.address}/v1/messages/1`);
    assert.equal(answer.status, 200);
    // Read once it has stopped: the logger writes its lines in batches.
    const stopped = await server.stop();
    assert.equal(stopped.code, 0);
    const line = stopped.stdout.split('\n').find((text) => text.includes(SAID));
    return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>);
  }

  it('scavenges on one thread, and says so, where auto finds one CPU to use', async function () {
    if (!TASKSET) this.skip();
    const line = await scavengeLine([], { under: ['taskset', '-c', '0'] });
    assert.deepEqual(line && [line.cpus, line.parallelScavenge], [1, 'auto']);
  });

  it('keeps the helpers where auto finds more than one CPU', async function () {
    if (availableParallelism() < 2) this.skip();
    assert.equal(await scavengeLine([]), undefined);
  });

  it('scavenges on one thread when told off, from the flag or the variable', async () => {
    assert.equal((await scavengeLine(['--parallel-scavenge', 'off']))?.parallelScavenge, 'off');
    assert.equal((await scavengeLine([], { env: { PARALLEL_SCAVENGE: 'OFF' } }))?.parallelScavenge, 'off');
  });

  it('keeps the helpers when told on, even on one CPU', async function () {
    if (!TASKSET) this.skip();
    assert.equal(await scavengeLine(['--parallel-scavenge', 'on'], { under: ['taskset', '-c', '0'] }), undefined);
  });

  it('leaves V8 as node was told when node was given a scavenge flag of its own', async () => {
    for (const flag of ['--parallel-scavenge', '--single-threaded-gc'])
      assert.equal(await scavengeLine(['--parallel-scavenge', 'off'], { nodeArgs: [flag] }), undefined, flag);
  });

  it('scavenges on one thread in a module served alone when told off', async () => {
    const env = { PORT: '0', LOG_LEVEL: 'debug' };
    const server = await startCli(['serve', 'api', '--parallel-scavenge', 'off'], { env });
    assert.equal((await fetch(`${server.address}/v1/messages/1`)).status, 200);
    // Read once it has stopped: the logger writes its lines in batches.
    const stopped = await server.stop();
    assert.equal(stopped.code, 0);
    assert.ok(stopped.stdout.includes(SAID), 'the debug line of a scavenge on one thread');
  });
});
