import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { acceptsConnections } from '../support/process';
import { groupAlive, killGroup, packedProject, startServer, type StartedServer } from '../support/package';
import { freshDataDir } from '../support/pglite';

/** Whether process `pid` is running. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pid of the gateway, from its first log line. */
function gatewayPid(server: StartedServer): number {
  const pid = Number(/"pid":(\d+)/.exec(server.output())?.[1]);
  assert.ok(Number.isInteger(pid), server.output());
  return pid;
}

/** Resolves once process `pid` has ended, however long that takes: the test's timeout ends a wait for one that does not. */
async function gone(pid: number): Promise<void> {
  while (alive(pid)) await sleep(50);
}

describe('gatehouse start run through npx, as the README runs it after installing the package', function () {
  let project: string;
  let config: string;
  const started: StartedServer[] = [];

  before(async function () {
    this.timeout(180_000);
    const packed = await packedProject();
    project = packed.project;
    config = join(packed.installed, 'config');
  });
  afterEach(() => {
    for (const server of started.splice(0)) killGroup(server.child.pid!);
  });

  /** `npx gatehouse start` in the user's project, with a log that names the gateway's pid. */
  async function npx(): Promise<{ server: StartedServer; port: number; pid: number }> {
    // A data folder of its own: the one beside the installed package's config would be every test's, and made anew.
    const server = await startServer(
      'npx',
      ['gatehouse', 'start', '--port', '0', '--grpc-port', '0', '--no-watch', '--config', config],
      project,
      {
        LOG_LEVEL: 'info',
        GATEHOUSE_DATA: await freshDataDir(),
      },
    );
    started.push(server);
    const port = Number(new URL(server.url).port);
    // The log line with the pid follows the listening line.
    while (!/"pid":\d+/.test(server.output())) await sleep(20);
    return { server, port, pid: gatewayPid(server) };
  }

  it('stops the gateway gracefully when npx alone gets SIGTERM, as a process manager sends it', async () => {
    const { server, port, pid } = await npx();
    assert.notEqual(pid, server.child.pid, 'npx runs the gateway in a process of its own');
    assert.equal((await fetch(`${server.url}/v1/messages/1`)).status, 200);
    server.child.kill('SIGTERM');
    await server.ended();
    await gone(pid);
    assert.equal(await acceptsConnections(port), false);
    assert.match(server.output(), /"reason":"the npm process that started it is gone","msg":"shutting down"/);
    assert.match(server.output(), /"msg":"gatehouse stopped"/);
    assert.equal(groupAlive(server.child.pid!), false, 'a process of npx outlived it');
  });

  it('stops the gateway when npx is killed, as a process manager does when a stop takes too long', async () => {
    const { server, port, pid } = await npx();
    // npm's shell is left behind, waiting for the gateway: the gateway watches npm too.
    server.child.kill('SIGKILL');
    await server.ended();
    await gone(pid);
    assert.equal(await acceptsConnections(port), false);
    assert.match(server.output(), /"msg":"gatehouse stopped"/);
  });
});
