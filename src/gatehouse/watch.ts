/**
 * @module gatehouse/watch
 * Watches the config folder (and its `ratelimit/` folder) and reports a
 * settled change: editors write a file in several steps, so changes are
 * debounced into one.
 */
import { watch, type FSWatcher } from 'node:fs';

export interface FolderWatcher {
  close(): void;
}

/** Calls `onChange` once `debounceMs` have passed without a further change under `dir`. */
export function watchFolder(dir: string, debounceMs: number, onChange: () => void): FolderWatcher {
  let timer: NodeJS.Timeout | undefined;
  const changed = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      onChange();
    }, debounceMs);
  };
  // Recursive watching covers `ratelimit/` and files replaced by rename (editors, ConfigMap symlink swaps).
  const watcher: FSWatcher = watch(dir, { recursive: true, persistent: false }, changed);
  watcher.on('error', () => undefined);
  return {
    close() {
      if (timer) clearTimeout(timer);
      watcher.close();
    },
  };
}
