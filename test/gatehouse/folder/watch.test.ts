import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchFolder, type FolderWatcher } from '../../../src/gatehouse';
import { publishAsKubernetes } from '../../support/kubernetes-volume';

const DEBOUNCE_MS = 20;
const POLL_MS = 50;

/** A watched folder: how many settled changes it reported, and a wait for the next one. */
interface Watched {
  readonly count: number;
  /** Resolves once a change is reported after `change()` has run; rejects after `timeoutMs`. */
  /** Makes the change and resolves once it is reported, however long that takes: the test's timeout ends a wait for one that never is. */
  changeAndAwait(change: () => void): Promise<void>;
  close(): void;
}

function watched(dir: string): Watched {
  let count = 0;
  let waiter: (() => void) | undefined;
  const watcher: FolderWatcher = watchFolder(
    dir,
    DEBOUNCE_MS,
    () => {
      count++;
      waiter?.();
    },
    { pollMs: POLL_MS },
  );
  return {
    get count() {
      return count;
    },
    async changeAndAwait(change) {
      const seen = new Promise<void>((resolve) => (waiter = resolve));
      change();
      await seen;
      waiter = undefined;
    },
    close: () => watcher.close(),
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, DEBOUNCE_MS * 4 + POLL_MS * 2));

describe('gatehouse config folder watch', function () {
  let root: string;
  let watching: Watched | undefined;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'gatehouse-watch-'));
  });
  afterEach(() => {
    watching?.close();
    watching = undefined;
    rmSync(root, { recursive: true, force: true });
  });

  function folder(name: string, files: Record<string, string> = { 'services.yaml': 'a: 1\n' }): string {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    return dir;
  }

  it('reports a change of a file replaced by a rename, as editors save', async () => {
    const dir = folder('config');
    watching = watched(dir);
    await watching.changeAndAwait(() => {
      writeFileSync(join(root, 'aside'), 'a: 2\n');
      renameSync(join(root, 'aside'), join(dir, 'services.yaml'));
    });
  });

  it('keeps reporting changes of a config folder deleted and made again', async () => {
    const dir = folder('config');
    watching = watched(dir);
    await watching.changeAndAwait(() => rmSync(dir, { recursive: true }));
    await watching.changeAndAwait(() => folder('config', { 'services.yaml': 'a: 2\n' }));
    await settle();
    await watching.changeAndAwait(() => writeFileSync(join(dir, 'services.yaml'), 'a: 3\n'));
  });

  it('keeps reporting changes when another folder is moved into the place of the config folder', async () => {
    const dir = folder('config');
    watching = watched(dir);
    const next = folder('config.new', { 'services.yaml': 'a: 2\n' });
    await watching.changeAndAwait(() => {
      renameSync(dir, join(root, 'config.old'));
      renameSync(next, dir);
    });
    await settle();
    await watching.changeAndAwait(() => writeFileSync(join(dir, 'services.yaml'), 'a: 3\n'));
  });

  it('follows a symlink to the config folder when it is pointed at another release', async () => {
    folder('releases/1');
    folder('releases/2');
    const current = join(root, 'current');
    symlinkSync('releases/1', current);
    watching = watched(current);
    await watching.changeAndAwait(() => {
      symlinkSync('releases/2', join(root, 'current.tmp'));
      renameSync(join(root, 'current.tmp'), current);
    });
    await settle();
    await watching.changeAndAwait(() => writeFileSync(join(root, 'releases/2/services.yaml'), 'a: 3\n'));
  });

  it('reports each update of a Kubernetes ConfigMap volume, whose files are links through ..data', async () => {
    const dir = join(root, 'config');
    publishAsKubernetes(dir, { 'services.yaml': 'a: 1\n', 'users.htpasswd': '# none\n' });
    watching = watched(dir);
    for (const n of [2, 3, 4]) {
      await watching.changeAndAwait(() =>
        publishAsKubernetes(dir, { 'services.yaml': `a: ${n}\n`, 'users.htpasswd': '# none\n' }),
      );
    }
  });

  it('reports each update of a ratelimit/ folder that a ConfigMap volume carries as ratelimit -> ..data/ratelimit', async () => {
    const dir = join(root, 'config');
    publishAsKubernetes(dir, { 'services.yaml': 'a: 1\n', 'ratelimit/gateway.yaml': 'domain: a\n' });
    watching = watched(dir);
    for (const n of [2, 3, 4]) {
      await watching.changeAndAwait(() =>
        publishAsKubernetes(dir, { 'services.yaml': 'a: 1\n', 'ratelimit/gateway.yaml': `domain: a${n}\n` }),
      );
    }
  });

  it('reports each update of a ratelimit/ folder that is a ConfigMap volume of its own', async () => {
    const dir = folder('config');
    publishAsKubernetes(join(dir, 'ratelimit'), { 'gateway.yaml': 'domain: a\n' });
    watching = watched(dir);
    for (const n of [2, 3, 4]) {
      await watching.changeAndAwait(() =>
        publishAsKubernetes(join(dir, 'ratelimit'), { 'gateway.yaml': `domain: a${n}\n` }),
      );
    }
  });

  it('reports nothing for files no loader reads: a README, swap files, backups, the probe file of vim, .DS_Store', async () => {
    const dir = folder('config');
    mkdirSync(join(dir, 'ratelimit'));
    watching = watched(dir);
    for (const name of [
      'README.md',
      '.DS_Store',
      '.services.yaml.swp',
      '4913',
      'services.yaml~',
      'services.yaml.bak',
      'notes.txt',
      'ratelimit/.gateway.yaml.swp',
      'ratelimit/README.md',
    ]) {
      writeFileSync(join(dir, name), 'x');
    }
    symlinkSync('root@host.1234:1700000000', join(dir, '.#services.yaml'));
    await settle();
    assert.equal(watching.count, 0);
    // What is read is still seen.
    await watching.changeAndAwait(() => writeFileSync(join(dir, 'extra.yml'), 'a: 1\n'));
    await watching.changeAndAwait(() => writeFileSync(join(dir, 'users.htpasswd'), '# none\n'));
    await watching.changeAndAwait(() => writeFileSync(join(dir, 'ratelimit', 'gateway.yaml'), 'domain: a\n'));
  });

  it('goes on reporting after a listener that throws, instead of ending the process from its timer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-watch-'));
    const calls: number[] = [];
    let next: (() => void) | undefined;
    const watcher = watchFolder(
      dir,
      DEBOUNCE_MS,
      () => {
        calls.push(calls.length);
        next?.();
        throw new Error('the listener failed');
      },
      { pollMs: POLL_MS },
    );
    try {
      for (const name of ['a.yaml', 'b.yaml']) {
        const seen = new Promise<void>((resolve) => (next = resolve));
        writeFileSync(join(dir, name), 'x: 1\n');
        await seen;
      }
      assert.ok(calls.length >= 2);
    } finally {
      watcher.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
