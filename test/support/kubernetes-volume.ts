/**
 * @module test/support/kubernetes-volume
 * A folder laid out as the kubelet lays out a ConfigMap or Secret volume:
 * the files in a hidden timestamped folder, `..data` a symlink to it, and
 * each file a symlink through `..data`. An update writes a new timestamped
 * folder, swaps `..data` by renaming a symlink over it, and removes the old
 * folder, as the kubelet's AtomicWriter does.
 */
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

let serial = 0;

/** Publishes `files` (name to text; a name may hold a folder, `ratelimit/gateway.yaml`) into `dir`, replacing what was there. */
export function publishAsKubernetes(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[-:T]/g, '_').replace(/\..*$/, '');
  const version = `..${stamp}.${process.pid}${String(serial++).padStart(6, '0')}`;
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, version, name)), { recursive: true });
    writeFileSync(join(dir, version, name), text);
  }
  let previous: string | undefined;
  try {
    previous = readlinkSync(join(dir, '..data'));
  } catch {
    previous = undefined;
  }
  symlinkSync(version, join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  const top = new Set(Object.keys(files).map((name) => name.split('/')[0]));
  for (const name of top) {
    try {
      lstatSync(join(dir, name));
    } catch {
      symlinkSync(join('..data', name), join(dir, name));
    }
  }
  for (const name of readdirSync(dir)) {
    if (!name.startsWith('..') && !top.has(name) && lstatSync(join(dir, name)).isSymbolicLink())
      rmSync(join(dir, name));
  }
  if (previous !== undefined) rmSync(join(dir, previous), { recursive: true, force: true });
}
