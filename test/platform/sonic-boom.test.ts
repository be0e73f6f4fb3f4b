/**
 * @module test/platform/sonic-boom
 * What the log destination (src/telemetry/log-destination) relies on in
 * sonic-boom: documented behaviour only, but behaviour its 4.x releases
 * did not have (a flushSync that looped for ever on a failed write),
 * checked against the sonic-boom installed.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SonicBoom from 'sonic-boom';
import { pinnedAt, relies } from '../support/reliance';

/** The sonic-boom release the log destination was written against. */
const SONIC_BOOM_VERSION = '5.0.2';

const rely = (what: string, holds: boolean, detail?: string) =>
  relies('sonic-boom', SONIC_BOOM_VERSION, what, holds, detail);

/** Hands `bytes` to `sonic`, which takes buffers in its `buffer` content mode. */
function write(sonic: SonicBoom, bytes: Buffer): void {
  (sonic.write as unknown as (data: Buffer) => boolean).call(sonic, bytes);
}

describe('platform: what the log destination relies on in sonic-boom', function () {
  let dir: string;
  beforeEach(function () {
    if (process.platform !== 'linux') this.skip();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-sonic-boom-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A FIFO opened here for reading and writing, without blocking: [reader, writer]. */
  function fifo(): [number, number] {
    const path = join(dir, 'out.fifo');
    spawnSync('mkfifo', [path]);
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    return [reader, openSync(path, constants.O_WRONLY | constants.O_NONBLOCK)];
  }

  it('is the sonic-boom it was written against', () => pinnedAt('sonic-boom', SONIC_BOOM_VERSION));

  it('drops what would pass maxLength, telling of it with a drop event, and keeps the rest', () => {
    const [reader, writer] = fifo();
    const dropped: Buffer[] = [];
    const errors: string[] = [];
    const sonic = new SonicBoom({
      fd: writer,
      sync: true,
      contentMode: 'buffer',
      minLength: 4096,
      maxWrite: 8192,
      maxLength: 4096 * 4,
      retryEAGAIN: () => false,
    });
    sonic.on('drop', (data: Buffer) => dropped.push(data));
    sonic.on('error', (err: NodeJS.ErrnoException) => errors.push(String(err.code)));
    // 1 MB into a pipe of 64 KiB nobody reads: a full pipe is an EAGAIN error, never a wait.
    for (let i = 0; i < 1024; i++) write(sonic, Buffer.alloc(1024, 0x61));
    rely('emits EAGAIN as an error when retryEAGAIN says no', errors.includes('EAGAIN'), errors.join(', '));
    rely('emits drop with the data it dropped past maxLength', dropped.length > 0 && Buffer.isBuffer(dropped[0]));
    // Once read, what was kept goes out at the next flush.
    const chunk = Buffer.alloc(1 << 16);
    let read = 0;
    for (let n = 1; n > 0;) {
      try {
        n = readSync(reader, chunk);
      } catch {
        n = 0;
      }
      read += n;
    }
    sonic.flush();
    let more = 0;
    try {
      more = readSync(reader, chunk);
    } catch {
      more = 0;
    }
    rely('writes what it kept once the pipe takes it again', read > 0 && more > 0, `${read} then ${more} bytes`);
    sonic.destroy();
    closeSync(reader);
  });

  it('throws from flushSync on a write that fails otherwise than EAGAIN, rather than retrying for ever', () => {
    const [reader, writer] = fifo();
    const sonic = new SonicBoom({ fd: writer, sync: true, contentMode: 'buffer', minLength: 4096, maxWrite: 8192 });
    sonic.on('error', () => undefined);
    write(sonic, Buffer.from('a line\n'));
    closeSync(reader);
    let thrown: NodeJS.ErrnoException | undefined;
    try {
      sonic.flushSync();
    } catch (err) {
      thrown = err as NodeJS.ErrnoException;
    }
    rely('throws EPIPE from flushSync once the reader is gone', thrown?.code === 'EPIPE', String(thrown));
    assert.doesNotThrow(() => sonic.destroy());
  });
});
