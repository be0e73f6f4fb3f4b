/**
 * @module test/support/small-disk
 * A real small file system for tests of a full disk: a tmpfs of a given
 * size, mounted on a temporary folder and unmounted afterwards. Mounting
 * takes root (or CAP_SYS_ADMIN); where it is not allowed, the test that
 * asked is skipped with the reason.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A mounted tmpfs. */
export interface SmallDisk {
  readonly dir: string;
  /** Fills what is left but `leaveBytes` with a file of its own, which {@link freeBallast} removes. */
  fill(leaveBytes?: number): void;
  /** Removes what {@link fill} wrote: space returns. */
  freeBallast(): void;
  /** Bytes free now. */
  free(): number;
  unmount(): void;
}

/** Mounts a tmpfs of `size` (as mount takes it: `1m`, `64m`), or skips `suite`'s test with the reason it cannot. */
export function mountSmallDisk(suite: Mocha.Context, size: string): SmallDisk {
  if (process.platform !== 'linux') suite.skip();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-small-disk-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    // A skipped test says why in its title's place: a full disk cannot be made here.
    suite.test!.title += ` (skipped: mounting a tmpfs is not allowed here: ${(mounted.stderr || mounted.error?.message || '').trim()})`;
    suite.skip();
  }
  const ballast = join(dir, 'ballast');
  const free = () => {
    const stat = statfsSync(dir);
    return stat.bavail * stat.bsize;
  };
  return {
    dir,
    fill(leaveBytes = 0) {
      const fd = openSync(ballast, 'a');
      const block = Buffer.alloc(64 * 1024);
      try {
        for (let left = free() - leaveBytes; left > 0; left -= block.length) {
          try {
            writeSync(fd, block, 0, Math.min(block.length, left));
          } catch {
            break;
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    freeBallast: () => rmSync(ballast, { force: true }),
    free,
    unmount() {
      spawnSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
