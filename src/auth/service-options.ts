/**
 * @module auth/service-options
 * What the auth service can be told: its users file, realm, cache, bcrypt
 * threads and logger, with the defaults it takes when not told.
 */
import type { ParsedUsers } from './passwords/htpasswd';

/** The logging this service does: pino's shape, so a pino logger fits. */
export interface AuthLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface AuthServiceOptions {
  /** The htpasswd file: `users.htpasswd` in the config folder. */
  usersFile: string;
  /** The module name a record's `auth_service` uses. Default `auth`. */
  name?: string;
  /** The realm of the `WWW-Authenticate: Basic` challenge. Default `gatehouse`. */
  realm?: string;
  /**
   * How long verified credentials are remembered, in ms. Default 60 000; 0
   * turns the cache off. Those used in the last quarter of it are checked
   * again in the background, still served meanwhile.
   */
  cacheTtlMs?: number;
  /** How many verified credentials are remembered. Default 10 000. */
  cacheMax?: number;
  /** The clock of the credentials cache, in ms. Default `Date.now`. */
  now?: () => number;
  /** Longer `Authorization` headers are refused unread. Default 4096 characters. */
  maxHeaderLength?: number;
  /** Reload when the users file changes. Default off: the config folder watcher calls `reload()`. */
  watch?: boolean;
  /** The users of `usersFile` already read and checked (by a folder check): the file is not read again at start. */
  users?: ParsedUsers;
  /** The largest users file read, in bytes. Default 8 MiB. */
  fileSizeLimit?: number;
  /**
   * Worker threads verifying bcrypt hashes, so that checks never hold up the
   * event loop. Default: one fewer than the CPUs, at least 1 and at most 4.
   * 0 verifies on the calling thread, with no bound on waiting checks.
   */
  threads?: number;
  /**
   * bcrypt checks that may wait for a thread. Beyond them a credential that is
   * not cached is answered at once with 429 and `Retry-After: 1`: not a 5xx,
   * which would make a gateway apply `failure_mode_allow`. Default 64.
   */
  maxQueued?: number;
  /** How long a check may wait for a thread before it is answered so too, in ms. Default 1000. */
  maxWaitMs?: number;
  /**
   * The bcrypt threads' nice value, 0–19 (Linux only), so that on a shared
   * core the event loop's requests come before the checks. Default 10.
   */
  niceness?: number;
  /**
   * How long a bcrypt thread may rest with no check before it stops, in ms; 0
   * keeps it. Default twice `cacheTtlMs`, and at least 1000.
   */
  idleMs?: number;
  logger?: AuthLogger;
}

/** The realm of the challenge unless told. */
export const DEFAULT_REALM = 'gatehouse';
/** How long verified credentials are remembered unless told, in ms. */
export const DEFAULT_CACHE_TTL_MS = 60_000;
/** How many verified credentials are remembered unless told. */
export const DEFAULT_CACHE_MAX = 10_000;
