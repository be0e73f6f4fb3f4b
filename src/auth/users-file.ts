/**
 * @module auth/users-file
 * The htpasswd file the auth service serves: read whole and refused whole on
 * any problem, what is weak in it logged at each load, and its folder watched
 * for changes when asked.
 */
import { watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { errorText, readBoundedText, readBoundedTextSync, whyUnreadable } from '../files';
import { parseHtpasswd, UsersFileError, type ParsedUsers } from './passwords/htpasswd';
import { bcryptCosts, commonCost } from './passwords/verify';
import type { AuthLogger } from './service-options';

/** Most lines of the users file warned of one by one at a load. */
const MAX_WARNING_LINES = 100;

function unreadable(file: string, err: unknown): UsersFileError {
  return new UsersFileError(file, [{ line: 0, message: whyUnreadable(err) }]);
}

function checkedUsers(file: string, text: string): ParsedUsers {
  const parsed = parseHtpasswd(text);
  if (parsed.problems.length > 0) throw new UsersFileError(file, parsed.problems);
  return parsed;
}

/** The users of `file`, read now; throws a {@link UsersFileError} listing every problem. */
export function readUsersFileSync(file: string, sizeLimit: number): ParsedUsers {
  let text: string;
  try {
    text = readBoundedTextSync(file, sizeLimit);
  } catch (err) {
    throw unreadable(file, err);
  }
  return checkedUsers(file, text);
}

/** The users of `file`; rejects with a {@link UsersFileError} listing every problem. */
export async function readUsersFile(file: string, sizeLimit: number): Promise<ParsedUsers> {
  try {
    return checkedUsers(file, await readBoundedText(file, sizeLimit));
  } catch (err) {
    throw err instanceof UsersFileError ? err : unreadable(file, err);
  }
}

/** Logs what a load of `file` brought: its weak hashes, mixed bcrypt costs, an empty file, and how many users. */
export function logUsersLoaded(logger: AuthLogger, file: string, parsed: ParsedUsers): void {
  // A line each, up to a point: a file of 100 000 SHA-1 users would log as many lines at every reload.
  for (const w of parsed.warnings.slice(0, MAX_WARNING_LINES))
    logger.warn({ usersFile: file, line: w.line }, w.message);
  if (parsed.warnings.length > MAX_WARNING_LINES)
    logger.warn({ usersFile: file, more: parsed.warnings.length - MAX_WARNING_LINES }, 'more lines have weak hashes');
  const costs = bcryptCosts(parsed.users.values());
  if (costs.length > 1) {
    const decoyCost = commonCost(parsed.users.values());
    logger.warn(
      { usersFile: file, costs, decoyCost },
      `users have different bcrypt costs: how long a refusal takes tells users at a cost other than ${decoyCost} ` +
        'from unknown names; rehash them at one cost',
    );
  }
  if (parsed.users.size === 0)
    logger.warn({ usersFile: file }, 'the users file names no user: every request is refused');
  logger.info({ usersFile: file, users: parsed.users.size }, 'users loaded');
}

/** A watch of the users file. */
export interface UsersFileWatch {
  /** Stops watching; a change seen and not yet told of is dropped. */
  close(): void;
}

/** Calls `changed` once `file` has stopped changing for 50 ms. */
export function watchUsersFile(file: string, changed: () => void, logger: AuthLogger): UsersFileWatch {
  const name = basename(file);
  let debounce: NodeJS.Timeout | undefined;
  // The folder is watched, not the file: editors and `htpasswd` replace the file by renaming.
  const watcher = watch(dirname(file), { persistent: false }, (_event, changedName) => {
    // A Kubernetes Secret or ConfigMap volume changes no file: it swaps the `..data` symlink the file goes through.
    if (changedName !== null && changedName !== name && !changedName.startsWith('..')) return;
    clearTimeout(debounce);
    debounce = setTimeout(changed, 50);
    debounce.unref();
  });
  watcher.on('error', (err) =>
    logger.error({ usersFile: file, err: errorText(err) }, 'watching the users file failed'),
  );
  return {
    close() {
      clearTimeout(debounce);
      watcher.close();
    },
  };
}
