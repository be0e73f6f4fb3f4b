/**
 * @module gatehouse/watch
 * Watches the config folder (and its `ratelimit/` folder) and reports a
 * settled change: editors write a file in several steps, so changes are
 * debounced into one.
 *
 * The folders are watched, never the files, and not with `recursive: true`:
 * Node 20 emulates recursion on Linux with a watcher per file, which stops
 * reporting a file once it has been replaced by a rename (what editors,
 * `htpasswd` and Kubernetes ConfigMap updates do).
 */
import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';

export interface FolderWatcher {
  close(): void;
}

/** The sub-folder whose files are read too (the rate-limit service's limits). */
const SUBFOLDER = 'ratelimit';

/** Calls `onChange` once `debounceMs` have passed without a further change in `dir` or `dir/ratelimit`. */
export function watchFolder(dir: string, debounceMs: number, onChange: () => void): FolderWatcher {
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const changed = () => {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      onChange();
    }, debounceMs);
  };

  let sub: FSWatcher | undefined;
  /** (Re)watches `ratelimit/`: it may come, go, or be swapped for another folder of the same name. */
  function watchSubfolder(): void {
    sub?.close();
    sub = undefined;
    if (closed) return;
    try {
      sub = watch(join(dir, SUBFOLDER), { persistent: false }, changed);
      sub.on('error', () => {
        sub?.close();
        sub = undefined;
      });
    } catch {
      // No such folder (yet): the folder's own watcher tells when it appears.
    }
  }

  const top: FSWatcher = watch(dir, { persistent: false }, (_event, name) => {
    // `..data` is the symlink a ConfigMap update swaps; a null name is an unknown change.
    if (name === null || name === SUBFOLDER || name.startsWith('..')) watchSubfolder();
    changed();
  });
  top.on('error', () => undefined);
  watchSubfolder();

  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      top.close();
      sub?.close();
    },
  };
}
