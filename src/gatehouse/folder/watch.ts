/**
 * @module gatehouse/folder/watch
 * Watches the config folder (and its `ratelimit/` folder) and reports a
 * settled change: editors write a file in several steps, so changes are
 * debounced into one.
 *
 * The folders are watched, never the files, and not with `recursive: true`:
 * Node 20 emulates recursion on Linux with a watcher per file, which stops
 * reporting a file once it has been replaced by a rename (what editors,
 * `htpasswd` and Kubernetes ConfigMap updates do). Only a change of a name
 * the loaders read counts: a swap file rewritten while someone types would
 * otherwise set off a reload every few seconds.
 *
 * A watch follows the folder it was set on, not its path: once the folder
 * is deleted and made again, moved aside for another (`mv new config`), or
 * reached through a symlink that is pointed elsewhere (a `current` release
 * link, as envoyproxy/ratelimit deployments swap), it would report nothing
 * more. So the path is also looked at every {@link IDENTITY_POLL_MS}, and
 * watched anew whenever it names another folder than the one watched.
 */
import { statSync, watch, type FSWatcher, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { USERS_FILE } from '../../auth/passwords/htpasswd';

export interface FolderWatcher {
  close(): void;
}

/** The sub-folder whose files are read too (the rate-limit service's limits). */
const SUBFOLDER = 'ratelimit';

/** How often the watched paths are checked for naming another folder. */
export const IDENTITY_POLL_MS = 1000;

/** Options of {@link watchFolder}, for tests. */
export interface WatchOptions {
  /** How often the paths are checked for naming another folder; default {@link IDENTITY_POLL_MS}. */
  pollMs?: number;
}

/** A YAML file that is not hidden: what the loaders read (`*.yaml`, `*.yml`). */
function isYamlName(name: string): boolean {
  return !name.startsWith('.') && /\.ya?ml$/i.test(name);
}

/**
 * Whether a change of `name` in the config folder may change what is loaded.
 * Swap files, backups (`services.yaml~`, `.bak`), vim's `4913` probe, a
 * README or `.DS_Store` do not; Kubernetes' `..data` swap does.
 */
function mattersInFolder(name: string): boolean {
  return name.startsWith('..') || name === SUBFOLDER || name === USERS_FILE || isYamlName(name);
}

function mattersInSubfolder(name: string): boolean {
  return name.startsWith('..') || isYamlName(name);
}

function identityOf(s: Stats): string | undefined {
  return s.isDirectory() ? `${s.dev}:${s.ino}` : undefined;
}

/** `dev:ino` of the folder `path` names (through symlinks), undefined when it names none. */
function folderIdentity(path: string): Promise<string | undefined> {
  return stat(path).then(identityOf, () => undefined);
}

function folderIdentitySync(path: string): string | undefined {
  try {
    return identityOf(statSync(path));
  } catch {
    return undefined;
  }
}

/**
 * Calls `onChange` once `debounceMs` have passed without a further change of
 * a file that is read in `dir` or `dir/ratelimit`, or of the folders either
 * path names.
 */
export function watchFolder(
  dir: string,
  debounceMs: number,
  onChange: () => void,
  options: WatchOptions = {},
): FolderWatcher {
  const subdir = join(dir, SUBFOLDER);
  const own = basename(dir);
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const changed = () => {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      // A throw in a timer would end the process: a listener's fault is its own.
      try {
        onChange();
      } catch {
        // onChange reports its own failures; nothing is left to do here.
      }
    }, debounceMs);
  };

  /** Watches `path` for names that `matters`; undefined when there is no folder there (yet). */
  function watchOne(
    path: string,
    matters: (name: string) => boolean,
    onEvent?: (name: string | null) => void,
  ): FSWatcher | undefined {
    try {
      const w = watch(path, { persistent: false }, (_event, name) => {
        onEvent?.(name);
        // A null name is an unknown change.
        if (name === null || matters(name)) changed();
      });
      // A watched folder that goes away ends its watch; the poll watches the next one.
      w.on('error', () => w.close());
      return w;
    } catch {
      return undefined;
    }
  }

  let top: FSWatcher | undefined;
  let topId: string | undefined;
  let sub: FSWatcher | undefined;
  let subId: string | undefined;

  /** (Re)watches `ratelimit/`: it may come, go, or be swapped for another folder of the same name. */
  function watchSubfolder(id: string | undefined): void {
    sub?.close();
    sub = undefined;
    subId = id;
    if (closed || id === undefined) return;
    sub = watchOne(subdir, mattersInSubfolder);
  }

  function watchTop(id: string | undefined): void {
    top?.close();
    top = undefined;
    topId = id;
    if (closed || id === undefined) return;
    top = watchOne(dir, mattersInFolder, (name) => {
      // `..data` is the symlink a ConfigMap update swaps, which may carry `ratelimit/` with it.
      // A folder made anew may have the number of the old one: these are watched anew whatever their number.
      if (name === null || name === SUBFOLDER || name.startsWith('..')) void check('sub');
      // The watched folder itself moved or went away: the event names it.
      else if (name === own) void check('top');
    });
  }

  let checking = false;
  let again = false;
  let forceTop = false;
  let forceSub = false;
  /**
   * Watches anew each path that now names another folder than the one
   * watched (and the one `force` names in any case: the sub-folder, or both),
   * and reports that as a change.
   */
  async function check(force?: 'top' | 'sub'): Promise<void> {
    if (force === 'top') forceTop = true;
    if (force === 'sub') forceSub = true;
    // An event during a check may follow what that check looked at: it is looked at again.
    if (checking) {
      again = true;
      return;
    }
    checking = true;
    try {
      do {
        again = false;
        const [nowTop, nowSub] = await Promise.all([folderIdentity(dir), folderIdentity(subdir)]);
        if (closed) return;
        const rewatchTop = forceTop || nowTop !== topId;
        const rewatchSub = rewatchTop || forceSub || nowSub !== subId;
        forceTop = forceSub = false;
        if (rewatchTop) watchTop(nowTop);
        if (rewatchSub) {
          watchSubfolder(nowSub);
          changed();
        }
      } while (again);
    } finally {
      checking = false;
    }
  }

  // Each identity is taken before its watch is set, so that a swap in between is seen by the next check.
  watchTop(folderIdentitySync(dir));
  watchSubfolder(folderIdentitySync(subdir));
  const poll = setInterval(() => void check(), options.pollMs ?? IDENTITY_POLL_MS);
  poll.unref();

  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      clearInterval(poll);
      top?.close();
      sub?.close();
    },
  };
}
