/**
 * @module gatehouse/certificate-files
 * The certificate files the configuration served reads (a TLSContext's
 * `cert_chain_file`, the files a Secret names), looked at every second as
 * `--tls-cert`'s are: a file written in place, renamed over, or a link
 * pointed elsewhere (a mounted Secret's `..data`) calls for a reload, which
 * reads them again and serves them to new connections, or, when they
 * cannot be served, keeps the certificates in service.
 */
import { stat } from 'node:fs/promises';
import type { FolderWatcher } from './folder/watch';
import { TLS_POLL_MS } from './serving/tls-files';

/** What a file's contents are known by: the file a path names (through links), its size and times. */
async function signature(path: string): Promise<string> {
  try {
    const s = await stat(path);
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
  } catch {
    return 'none';
  }
}

/**
 * Calls `onChange` when a file of `files()` (the list of the configuration
 * served now, which a reload may change) names other contents than at the
 * look before. A list that changed is taken as it is, with no call.
 */
export function watchCertificateFiles(
  files: () => readonly string[],
  onChange: () => void,
  pollMs: number = TLS_POLL_MS,
): FolderWatcher {
  let seen = new Map<string, string>();
  let looking = false;
  let closed = false;
  const look = async () => {
    if (looking) return;
    looking = true;
    try {
      const list = files();
      const now = new Map<string, string>();
      for (const [i, sig] of (await Promise.all(list.map(signature))).entries()) now.set(list[i], sig);
      const sameList = now.size === seen.size && [...now.keys()].every((f) => seen.has(f));
      const changed = sameList && [...now].some(([f, sig]) => seen.get(f) !== sig);
      seen = now;
      if (changed && !closed) onChange();
    } catch {
      // A look runs in a timer: nothing it meets may end the process.
    } finally {
      looking = false;
    }
  };
  void look();
  const timer = setInterval(() => void look(), pollMs);
  timer.unref();
  return {
    close() {
      closed = true;
      clearInterval(timer);
    },
  };
}
