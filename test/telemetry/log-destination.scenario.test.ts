import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logDestination } from '../../src/telemetry';
import { openNonBlocking } from '../../src/telemetry/log-lines';
import type { WriteTrouble } from '../../src/telemetry/write-trouble';
import { assertBuilt, REPO_ROOT } from '../support/process';
import { mountSmallDisk } from '../support/small-disk';

/** A report that keeps what it is told, in words. */
function keptReport(): { told: string[]; report: () => WriteTrouble } {
  const told: string[] = [];
  return {
    told,
    report: () => ({
      failed: (err, gone) => told.push(`failed ${err.code}${gone ? ' gone' : ''}`),
      resolved: (dropped) => told.push(`resolved ${dropped}`),
    }),
  };
}

function flushed(destination: { flush(cb: (err?: Error) => void): void }): Promise<Error | undefined> {
  return new Promise((resolve) => destination.flush((err) => resolve(err)));
}

/** Everything the pipe holds now, read without waiting. */
function readWhatWaits(fd: number): string {
  const chunk = Buffer.alloc(64 * 1024);
  let text = '';
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, chunk, 0, chunk.length, null);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return text;
      throw err;
    }
    if (n === 0) return text;
    text += chunk.toString('utf8', 0, n);
  }
}

/** Reads the pipe, letting timers run in between, until `done(all read so far)`. */
async function readUntil(fd: number, done: (text: string) => boolean): Promise<string> {
  let text = '';
  while (!done((text += readWhatWaits(fd)))) await new Promise((resolve) => setTimeout(resolve, 1));
  return text;
}

const onLinux = process.platform === 'linux';

describe('telemetry/log-destination', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-pipe-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A FIFO with this process as its reader (non-blocking) and its writer: [reader, writer]. */
  function fifo(): [number, number] {
    const path = join(dir, 'log.fifo');
    spawnSync('mkfifo', [path]);
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    return [reader, openSync(path, 'w')];
  }

  it('writes into a pipe whose reader has stopped without waiting for it, keeps a bounded backlog, and says how many lines it dropped', async function () {
    if (!onLinux) this.skip();
    const [reader, writer] = fifo();
    try {
      const destination = logDestination(writer, { flushMs: 1, backlogBytes: 16 * 1024 });
      const lines = Array.from({ length: 2000 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat(100)}"}\n`);
      // ~230 KB into a 64 KiB pipe nobody reads: each call returns, the test goes on.
      for (const line of lines) destination.write(line);
      let flushed = false;
      (destination as unknown as { flush(cb: () => void): void }).flush(() => (flushed = true));
      const text = await readUntil(reader, (t) => flushed && t.endsWith('\n'));
      const got = text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { n?: number; dropped?: number; level?: number; msg?: string });
      const at = got.findIndex((line) => line.dropped !== undefined);
      assert.ok(at > 0, 'a line says lines were dropped');
      const notice = got[at];
      const before = got.slice(0, at).map((line) => line.n);
      const after = got.slice(at + 1).map((line) => line.n);
      // What went out is whole lines, the first ones (and the last, if there was room again), in order; the rest is counted, not lost silently.
      assert.deepEqual(
        before,
        before.map((_, i) => i),
      );
      assert.deepEqual(
        after,
        after.map((_, i) => lines.length - after.length + i),
      );
      assert.ok(before.length * 113 >= 16 * 1024, `the backlog was filled before dropping: ${before.length} lines`);
      assert.equal(notice.level, 40);
      assert.equal(notice.dropped, lines.length - before.length - after.length);
      assert.ok(notice.dropped > 0);
      assert.match(notice.msg!, /dropped/);
      // Once the reader is back, lines flow again.
      destination.write('{"n":"after"}\n');
      assert.equal(JSON.parse((await readUntil(reader, (t) => t.endsWith('\n'))).trim()).n, 'after');
      (destination as unknown as { end(): void }).end();
    } finally {
      closeSync(reader);
    }
  });

  it('drops lines silently, without throwing, once the reader of the pipe is gone', async function () {
    if (!onLinux) this.skip();
    const [reader, writer] = fifo();
    const destination = logDestination(writer, { flushMs: 1, report: keptReport().report });
    destination.write('{"n":1}\n');
    assert.equal(JSON.parse((await readUntil(reader, (t) => t.endsWith('\n'))).trim()).n, 1);
    closeSync(reader);
    for (let i = 0; i < 100; i++) destination.write(`{"n":${i},"pad":"${'x'.repeat(200)}"}\n`);
    await new Promise<void>((resolve, reject) =>
      (destination as unknown as { flush(cb: (err?: Error) => void): void }).flush((err) =>
        err ? reject(err) : resolve(),
      ),
    );
    (destination as unknown as { end(): void }).end();
  });

  it('calls a flush back when the reader of the pipe left after lines were dropped', async function () {
    if (!onLinux) this.skip();
    const [reader, writer] = fifo();
    const destination = logDestination(writer, { flushMs: 1, backlogBytes: 16 * 1024, report: keptReport().report });
    // The pipe and the backlog full, lines dropped; then the reader is gone.
    for (let i = 0; i < 2000; i++) destination.write(`{"n":${i},"pad":"${'x'.repeat(100)}"}\n`);
    closeSync(reader);
    await new Promise<void>((resolve, reject) =>
      (destination as unknown as { flush(cb: (err?: Error) => void): void }).flush((err) =>
        err ? reject(err) : resolve(),
      ),
    );
    (destination as unknown as { end(): void }).end();
  });

  it('writes the lines still waiting when the process exits, its standard output a shell pipe', async function () {
    if (!onLinux) this.skip();
    assertBuilt();
    const telemetry = JSON.stringify(join(REPO_ROOT, 'dist', 'telemetry'));
    const script = `const logger = require(${telemetry}).createLogger({ level: 'info' });
      for (let i = 0; i < 500; i++) logger.info({ n: i }, 'line'); process.exit(0);`;
    // A shell's pipe is a FIFO (Node's own stdio pipes are sockets): as a container's standard output.
    const child = spawn('sh', ['-c', `"${process.execPath}" -e '${script.replace(/'/g, "'\\''")}' | cat`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const [code] = await once(child, 'close');
    assert.equal(code, 0);
    assert.deepEqual(
      out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).n),
      Array.from({ length: 500 }, (_, i) => i),
    );
  });

  it('bounds what waits for a socket whose reader has stopped too, and says how many lines it dropped', async function () {
    if (process.platform === 'win32') this.skip();
    const path = join(dir, 'log.sock');
    const server = net.createServer();
    server.listen(path);
    await once(server, 'listening');
    const accepted = once(server, 'connection');
    const client = net.connect(path);
    await once(client, 'connect');
    const [reading] = (await accepted) as [net.Socket];
    reading.pause();
    try {
      const fd = (client as unknown as { _handle: { fd: number } })._handle.fd;
      const destination = logDestination(fd, { flushMs: 1, backlogBytes: 16 * 1024 });
      const lines = Array.from({ length: 40_000 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat(100)}"}\n`);
      // Several MB into a socket nobody reads: far more than its buffers and the bound hold.
      for (const line of lines) destination.write(line);
      let text = '';
      reading.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      reading.resume();
      // The notice comes when there is room again, after the lines kept; a line written then follows it.
      while (!text.includes('"dropped":')) await new Promise((resolve) => setTimeout(resolve, 5));
      destination.write('{"n":"after"}\n');
      while (!text.endsWith('{"n":"after"}\n')) await new Promise((resolve) => setTimeout(resolve, 5));
      const got = text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { n?: number | string; dropped?: number; level?: number });
      const at = got.findIndex((line) => line.dropped !== undefined);
      assert.ok(at > 0, 'a line says lines were dropped');
      const before = got.slice(0, at).map((line) => line.n);
      // Whole lines, the first ones, in order; the ones after them counted; then the line written after.
      assert.deepEqual(
        before,
        before.map((_, i) => i),
      );
      assert.deepEqual(
        got.slice(at + 1).map((line) => line.n),
        ['after'],
      );
      assert.equal(got[at].level, 40);
      assert.equal(got[at].dropped, lines.length - before.length);
      assert.ok(got[at].dropped > 0);
      await new Promise<void>((resolve, reject) =>
        (destination as unknown as { flush(cb: (err?: Error) => void): void }).flush((err) =>
          err ? reject(err) : resolve(),
        ),
      );
    } finally {
      client.destroy();
      reading.destroy();
      server.close();
    }
  });

  it('keeps the process going on a full disk, counts the lines it drops, says so once, and writes again once there is room', async function () {
    const disk = mountSmallDisk(this, '1m');
    try {
      const file = join(disk.dir, 'gatehouse.log');
      const { told, report } = keptReport();
      const destination = logDestination(file, { flushMs: 1, backlogBytes: 64 * 1024, report });
      disk.fill(16 * 1024);
      const line = (n: number) => `{"n":${n},"pad":"${'x'.repeat(200)}"}\n`;
      // Some 400 KB of lines onto 16 KB of room: written while there is room, then held, then dropped.
      for (let n = 0; n < 2000; n++) destination.write(line(n));
      assert.ok(destination.droppedLines > 0, 'lines were dropped');
      assert.deepEqual(told, ['failed ENOSPC'], 'told once, whatever the number of lines');
      const kept = readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
      assert.ok(kept > 0 && kept < 2000, `${kept} lines written before the disk was full`);

      disk.freeBallast();
      // What was held goes out at the next try (a timer's, or a flush's); lines come in after it.
      assert.equal(await flushed(destination), undefined);
      destination.write('{"n":"after"}\n');
      assert.equal(await flushed(destination), undefined);
      const lines = readFileSync(file, 'utf8').trim().split('\n');
      const got = lines.map((l) => JSON.parse(l) as { n?: number | string; dropped?: number });
      // The lines held while the disk was full, in order, whole; then how many were dropped; then the new line.
      const numbers = got.filter((l) => typeof l.n === 'number').map((l) => l.n);
      assert.deepEqual(
        numbers,
        numbers.map((_, i) => i),
      );
      const notice = got.find((l) => l.dropped !== undefined);
      assert.equal(notice?.dropped, 2000 - numbers.length);
      assert.equal(destination.droppedLines, 2000 - numbers.length);
      assert.deepEqual(got.at(-1), { n: 'after' });
      assert.deepEqual(told, ['failed ENOSPC', `resolved ${destination.droppedLines}`]);
      destination.end();
    } finally {
      disk.unmount();
    }
  });

  it('counts the lines written after the reader of a pipe left, and says so once', async function () {
    if (!onLinux) this.skip();
    const [reader, writer] = fifo();
    const { told, report } = keptReport();
    const destination = logDestination(writer, { flushMs: 1, report });
    closeSync(reader);
    for (let i = 0; i < 100; i++) destination.write(`{"n":${i}}\n`);
    assert.equal(await flushed(destination), undefined);
    for (let i = 0; i < 50; i++) destination.write(`{"n":${i}}\n`);
    assert.deepEqual(told, ['failed EPIPE gone']);
    // The first chunk's lines were lost with the reader, uncounted; every line after it is counted.
    assert.ok(destination.droppedLines >= 50, `${destination.droppedLines} lines counted as dropped`);
    destination.end();
  });

  it('opens only a pipe or a terminal again without blocking: a file or a closed descriptor is written as it is', () => {
    const file = join(dir, 'plain.log');
    writeFileSync(file, '');
    const fd = openSync(file, 'a');
    try {
      assert.equal(openNonBlocking(fd), undefined);
    } finally {
      closeSync(fd);
    }
    assert.equal(openNonBlocking(fd), undefined);
  });
});
