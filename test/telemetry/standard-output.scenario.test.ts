/**
 * @module test/telemetry/standard-output
 * A running gateway whose standard output cannot take its log: on a full
 * disk, into a pipe whose reader left, into a pipe whose reader stopped
 * reading. It keeps answering, counts the lines it drops in its metrics,
 * says so once on standard error, and writes again once it can.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../support/polling';
import { releaseDataDir, reusableDataDir } from '../support/pglite';
import { assertBuilt, REPO_ROOT, TEST_ENV } from '../support/process';
import { mountSmallDisk } from '../support/small-disk';
import { freePort } from '../support/ports';

function get(port: number, path: string, agent?: http.Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      })
      .on('error', reject);
  });
}

/** `count` requests, `concurrency` at a time on kept-alive connections: each is an access line. */
async function traffic(port: number, count: number, concurrency = 8): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const statuses: number[] = [];
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < count) statuses.push((await get(port, '/gateway/v0/check_alive', agent)).status);
      }),
    );
  } finally {
    agent.destroy();
  }
  return statuses;
}

/** Waits until the gateway answers its liveness check. */
async function answering(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the gateway exited (${child.exitCode}):\n${stderr()}`);
    try {
      if ((await get(port, '/gateway/v0/check_alive')).status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function droppedMetric(text: string): number {
  const match = /^gatehouse_log_lines_dropped_total\{destination="stdout"\} (\d+)$/m.exec(text);
  assert.ok(match, `the metric is served:\n${text.slice(0, 500)}`);
  return Number(match[1]);
}

/** `gatehouse start` with its standard output on `stdout`, standard error read here unless given too. */
async function startGateway(
  stdout: number | 'pipe',
  errors: number | 'pipe' = 'pipe',
): Promise<{
  child: ChildProcess;
  port: number;
  stderr: () => string;
  stop: () => Promise<void>;
}> {
  assertBuilt();
  const port = await freePort();
  const data = await reusableDataDir();
  const child = spawn(
    process.execPath,
    [join('dist', 'cli', 'main.js'), 'start', '--port', String(port), '--grpc-port', '0', '--no-watch'],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, ...TEST_ENV, GATEHOUSE_DATA: data, LOG_LEVEL: 'info' },
      stdio: ['ignore', stdout, errors],
    },
  );
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const stderr = () => err;
  let released = false;
  await answering(port, child, stderr);
  return {
    child,
    port,
    stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      if (!released) releaseDataDir(data);
      released = true;
    },
  };
}

describe('a gateway whose standard output cannot take its log', function () {
  it('keeps answering on a full disk, says so once, and writes what it held once there is room', async function () {
    const disk = mountSmallDisk(this, '1m');
    const file = join(disk.dir, 'gatehouse.log');
    const out = openSync(file, 'a');
    const gateway = await startGateway(out).finally(() => closeSync(out));
    try {
      disk.fill();
      // 2,000 access lines (half a MB) onto a disk with no room left: held, within the 8 MiB the log may hold.
      const statuses = await traffic(gateway.port, 2000);
      assert.deepEqual(new Set(statuses), new Set([200]));
      assert.equal(gateway.child.exitCode, null, 'the gateway runs');
      const metrics = await get(gateway.port, '/gateway/v0/metrics');
      assert.equal(metrics.status, 200);
      assert.equal(droppedMetric(metrics.body), 0, 'nothing dropped yet: the lines wait');
      const told = gateway.stderr().match(/standard output cannot be written \(ENOSPC[^\n]*\n/g) ?? [];
      assert.equal(told.length, 1, `told once on standard error:\n${gateway.stderr()}`);

      disk.freeBallast();
      while (!gateway.stderr().includes('standard output is written again')) await traffic(gateway.port, 10);
      await gateway.stop();
      const requests = readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg?: string; path?: string })
        .filter((line) => line.msg === 'request' && line.path === '/gateway/v0/check_alive');
      assert.ok(requests.length >= 2000, `every request held was written: ${requests.length}`);
    } finally {
      await gateway.stop();
      disk.unmount();
    }
  });

  it('keeps answering with standard error on the same full disk, and says it writes again there once there is room', async function () {
    const disk = mountSmallDisk(this, '1m');
    const file = join(disk.dir, 'gatehouse.log');
    // As `gatehouse start >> gatehouse.log 2>&1` has it: both streams into one file.
    const out = openSync(file, 'a');
    const gateway = await startGateway(out, out).finally(() => closeSync(out));
    try {
      disk.fill();
      const statuses = await traffic(gateway.port, 1000);
      assert.deepEqual(new Set(statuses), new Set([200]));
      assert.equal(gateway.child.exitCode, null, 'the gateway runs');
      disk.freeBallast();
      // The trouble could not be told where there was no room; its end is, with the lines held.
      await eventually(async () => {
        await traffic(gateway.port, 10);
        return readFileSync(file, 'utf8').includes('gatehouse: standard output is written again;') ? true : undefined;
      }, 'the line that says standard output is written again');
      gateway.child.kill('SIGTERM');
      const [code] = (await once(gateway.child, 'exit')) as [number | null];
      assert.equal(code, 0);
      const requests = readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"msg":"request"') && line.includes('"path":"/gateway/v0/check_alive"'));
      assert.ok(requests.length >= 1000, `every request held was written: ${requests.length}`);
    } finally {
      await gateway.stop();
      disk.unmount();
    }
  });

  describe('into a pipe', function () {
    let dir: string;
    beforeEach(function () {
      if (process.platform !== 'linux') this.skip();
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-stdout-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    /** A FIFO with a reader here, and the gateway's end of it: [reader, writer]. */
    function fifo(): [number, number] {
      const path = join(dir, 'out.fifo');
      spawnSync('mkfifo', [path]);
      const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
      return [reader, openSync(path, 'w')];
    }

    it('keeps answering while the reader of its pipe reads nothing', async () => {
      const [reader, writer] = fifo();
      const gateway = await startGateway(writer).finally(() => closeSync(writer));
      try {
        // Far more than the 64 KiB pipe holds, none of it read.
        const statuses = await traffic(gateway.port, 3000);
        assert.deepEqual(new Set(statuses), new Set([200]));
        assert.equal((await get(gateway.port, '/gateway/v0/check_alive')).status, 200);
        assert.equal(gateway.child.exitCode, null);
      } finally {
        await gateway.stop();
        closeSync(reader);
      }
    });

    it('keeps answering once the reader is gone, and says so once', async () => {
      const [reader, writer] = fifo();
      const gateway = await startGateway(writer).finally(() => closeSync(writer));
      try {
        closeSync(reader);
        const statuses = await traffic(gateway.port, 500);
        assert.deepEqual(new Set(statuses), new Set([200]));
        const metrics = await get(gateway.port, '/gateway/v0/metrics');
        assert.ok(droppedMetric(metrics.body) > 0, 'the lines after the reader left are counted');
        const told = gateway.stderr().match(/standard output cannot be written \(EPIPE[^\n]*\n/g) ?? [];
        assert.equal(told.length, 1, `told once on standard error:\n${gateway.stderr()}`);
        // It stops as asked, nothing waiting for a reader that will not come.
        gateway.child.kill('SIGTERM');
        const [code] = (await once(gateway.child, 'exit')) as [number | null];
        assert.equal(code, 0);
      } finally {
        await gateway.stop();
      }
    });
  });
});
