/**
 * @module test/bookings/database/folder-lock
 * One process a data folder: a second lock, in this process or another, is
 * refused naming the holder; the lock is free again once released, and once
 * its process is killed, however it ends.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataFolderInUseError, lockFolder } from '../../../src/bookings/database/folder-lock';
import { REPO_ROOT } from '../../support/process';

describe('bookings/database/folder-lock', function () {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a second lock in this process, naming it, and takes one again once released', async () => {
    const lock = await lockFolder(dir);
    await assert.rejects(lockFolder(dir), (err: unknown) => {
      assert.ok(err instanceof DataFolderInUseError && err.holder === process.pid && err.folder === dir);
      // Not "another process", which would send its reader looking for one.
      assert.match(err.message, new RegExp(`^the data folder ${dir} is in use by another Gatehouse in this process: `));
      return true;
    });
    await lock.release();
    const again = await lockFolder(dir);
    await again.release();
  });

  it('refuses a lock another process holds, and takes it once that process is killed', async () => {
    const script = `require('./src/bookings/database/folder-lock').lockFolder(${JSON.stringify(dir)}).then(() => { console.log('locked'); setInterval(() => {}, 1000); })`;
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
        child.once('exit', (code) => reject(new Error(`the holder exited with ${code}`)));
      });
      await assert.rejects(
        lockFolder(dir),
        (err: unknown) => err instanceof DataFolderInUseError && err.holder === child.pid,
      );
    } finally {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
    const lock = await lockFolder(dir);
    await lock.release();
  });
});
