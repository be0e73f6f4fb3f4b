/**
 * @module test/workers/workers
 * `gatehouse start --workers 2` as a user runs it: two threads on the same
 * ports that are one gateway (exact limits with the embedded counters, one
 * PGlite, one config, one metrics endpoint, one access log, one stop), on
 * the Node versions that listen with reusePort; one worker, said in the
 * log, on those that do not.
 */
import assert from 'node:assert/strict';
import { supportsReusePort } from '../../src/ports';
import { DEMO } from '../support/bookings';
import { send, type Answer } from '../support/client';
import { copyConfig, type TempConfig } from '../support/config-folder';
import { ALICE } from '../support/credentials';
import { freshDataDir } from '../support/pglite';
import { eventually } from '../support/polling';
import { killAll, runCli, startCli, type CliServer } from '../support/process';

const ENV = { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'info' };
const HOTEL = { hotel_id: DEMO.hotels.harbourOslo, check_in: '2099-12-20', nights: 2 };

/** The workers that wrote the access lines of `path`, once there are `count` of them (lines wait a moment for their chunk). */
async function workersSeen(server: CliServer, path: string, count: number): Promise<number[]> {
  const lines = await eventually(async () => {
    const written = server
      .output()
      .stdout.split('\n')
      .filter((l) => l.includes(`"path":"${path}"`));
    return written.length >= count ? written : undefined;
  }, `${count} access lines of ${path}`);
  return [...new Set(lines.map((l) => (JSON.parse(l) as { worker: number }).worker))].sort();
}

/** `n` requests at once, each on a connection of its own: the kernel shares connections, not requests, among the workers. */
function atOnce(n: number, ask: () => Promise<Answer>): Promise<Answer[]> {
  return Promise.all(Array.from({ length: n }, ask));
}

describe('gatehouse start --workers 2', function () {
  let config: TempConfig;
  before(function () {
    if (!supportsReusePort()) this.skip();
  });
  beforeEach(() => {
    config = copyConfig();
  });
  afterEach(async () => {
    await killAll();
    config?.remove();
  });

  const start = async (env: Record<string, string> = {}) =>
    startCli(['start', '--workers', '2', '--config', config.dir], { env: { ...ENV, ...env } });

  it('admits exactly what one process admits: 48 connections at once against a limit of 3 get exactly 3 × 200', async () => {
    const server = await start();
    assert.match(server.line, /\(2 workers; .*counters: shared memory; /);
    const answers = await atOnce(48, () =>
      send(server.address, '/v1/hotels', { headers: { Authorization: ALICE, 'X-Gateway-Test-Allow': 'one-key' } }),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [...Array<number>(3).fill(200), ...Array<number>(45).fill(429)]);
    assert.deepEqual(await workersSeen(server, '/v1/hotels', 48), [1, 2], 'both workers answered');
  });

  it('shares one PGlite: a booking made through one worker is read through both, and one Idempotency-Key makes one booking', async () => {
    const server = await start({ GATEHOUSE_DATA: await freshDataDir() });
    const made = await send(server.address, '/v1/hotels/bookings/', {
      method: 'POST',
      headers: { Authorization: ALICE, 'Content-Type': 'application/json' },
      body: JSON.stringify(HOTEL),
    });
    assert.equal(made.status, 201, made.text);
    const id = made.json().id as string;
    const reads = await atOnce(16, () =>
      send(server.address, `/v1/hotels/bookings/${id}`, { headers: { Authorization: ALICE } }),
    );
    assert.deepEqual(new Set(reads.map((r) => r.status)), new Set([200]));

    const retried = await atOnce(12, () =>
      send(server.address, '/v1/hotels/bookings/', {
        method: 'POST',
        headers: { Authorization: ALICE, 'Content-Type': 'application/json', 'Idempotency-Key': 'once-only' },
        body: JSON.stringify({ ...HOTEL, nights: 5 }),
      }),
    );
    const booked = retried.filter((r) => r.status === 200 || r.status === 201);
    // A retry while the first is being made is told so (409) rather than booked twice.
    assert.deepEqual(
      new Set(retried.filter((r) => !booked.includes(r)).map((r) => r.status)),
      new Set(booked.length === 12 ? [] : [409]),
    );
    assert.equal(new Set(booked.map((r) => r.json().id)).size, 1, 'one booking for one key');
    const listed = await send(server.address, '/v1/hotels/bookings/', { headers: { Authorization: ALICE } });
    const fives = (listed.json().items as { nights: number }[]).filter((b) => b.nights === 5);
    assert.equal(fives.length, 1);
    assert.deepEqual(await workersSeen(server, `/v1/hotels/bookings/${id}`, 16), [1, 2], 'both workers answered');
  });

  it('reloads every worker when the folder changes, refuses a bad folder for all on SIGHUP, and check_ready shows one config', async () => {
    const server = await start();
    const ready = async () =>
      (await atOnce(12, () => send(server.address, '/gateway/v0/check_ready'))).map((r) => {
        assert.equal(r.status, 200, r.text);
        const body = r.json() as { routes: number; config: string };
        return `${body.routes} ${body.config}`;
      });
    const before = new Set(await ready());
    assert.equal(before.size, 1, [...before].join(', '));

    // The folder is watched once, for every worker.
    config.write('extra.yaml', 'apiVersion: gateway/v1\nkind: Mapping\nname: extra\nprefix: /extra/\nservice: api\n');
    const after = await eventually(async () => {
      const seen = new Set(await ready());
      return seen.size === 1 && !seen.has([...before][0]) ? seen : undefined;
    }, 'every worker serving the new config');
    assert.match([...after][0], /^6 /);

    config.write('broken.yaml', 'apiVersion: gateway/v1\nkind: Mapping\nname: broken\n');
    server.child.kill('SIGHUP');
    // The first worker reads the folder and refuses it: the others are never handed it.
    await eventually(
      async () => (server.output().stdout.includes('"msg":"config reload refused;') ? true : undefined),
      'the reload refused',
    );
    assert.deepEqual(new Set(await ready()), after);
  });

  it('sums every worker in one metrics endpoint, and writes whole access lines, each with its worker', async () => {
    const server = await start();
    const answers = await atOnce(200, () => send(server.address, '/v1/messages/1'));
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
    const metrics = await send(server.address, '/gateway/v0/metrics');
    const counted = [
      ...metrics.text.matchAll(
        /^gatehouse_http_requests_total\{route="([^"]+)",method="GET",status="200"[^}]*\} (\d+)$/gm,
      ),
    ]
      .filter((m) => m[1] !== 'gateway-metrics')
      .reduce((sum, m) => sum + Number(m[2]), 0);
    assert.equal(counted, 200);
    assert.deepEqual(await workersSeen(server, '/v1/messages/1', 200), [1, 2]);
  });

  it('drains every worker on SIGTERM, exits 0, and leaves nothing listening', async () => {
    const server = await start();
    assert.equal((await send(server.address, '/v1/messages/1')).status, 200);
    const ended = await server.stop();
    assert.equal(ended.code, 0, ended.stderr);
    for (const worker of [1, 2])
      assert.match(ended.stdout, new RegExp(`"worker":${worker},[^\\n]*"msg":"gatehouse stopped"`));
    assert.match(ended.stdout, /\n\{[^\n]*"msg":"gatehouse stopped"\}\n$/);
    await assert.rejects(send(server.address, '/v1/messages/1'), /ECONNREFUSED/);
  });

  it('gives the clear error of one process when its PGlite data folder is held by another gateway', async () => {
    const data = await freshDataDir();
    const holder = await startCli(['start', '--config', config.dir], { env: { ...ENV, GATEHOUSE_DATA: data } });
    const refused = await runCli(['start', '--workers', '2', '--config', config.dir], {
      env: { ...ENV, GATEHOUSE_DATA: data },
    });
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      new RegExp(`the data folder ${data} is in use by another process \\(pid ${holder.child.pid}\\)`),
    );
  });
});

describe('gatehouse start --workers on a Node without reusePort', function () {
  before(function () {
    if (supportsReusePort()) this.skip();
  });
  afterEach(killAll);

  it('serves with one worker, and says why in the log', async () => {
    const server = await startCli(['start', '--workers', '2', '--no-watch'], { env: ENV });
    assert.doesNotMatch(server.line, /\d+ workers;/);
    assert.match(
      server.output().stdout,
      /"workers":2,[^\n]*"msg":"serving with one worker: workers share the ports with reusePort, which needs Node 22.12 or later"/,
    );
    assert.equal((await send(server.address, '/v1/messages/1')).status, 200);
  });
});

describe('gatehouse start --workers, given a count it cannot run', function () {
  for (const given of ['0', '-1', 'abc', '1.5', String(4 * require('node:os').availableParallelism() + 1)]) {
    it(`refuses --workers ${given} as a usage error (exit 2)`, async () => {
      const result = await runCli(['start', '--workers', given], { env: ENV });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /--workers: must be auto or an integer from 1 to \d+ \(four times the \d+ cores\)/);
    });
  }

  it('refuses WORKERS=0 from the environment as it refuses any variable (exit 1)', async () => {
    const result = await runCli(['start'], { env: { ...ENV, WORKERS: '0' } });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /WORKERS: must be auto or an integer from 1 to \d+/);
  });
});

describe('gatehouse start --young-generation, given a size it cannot use', function () {
  for (const given of ['0', '2', 'abc', '12m', '1025']) {
    it(`refuses --young-generation ${given} as a usage error (exit 2)`, async () => {
      const result = await runCli(['start', '--workers', '2', '--young-generation', given], { env: ENV });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /--young-generation: must be an integer from 3 to 1024 \(MiB\) \(got "/);
    });
  }
});
