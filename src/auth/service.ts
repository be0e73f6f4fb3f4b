/**
 * @module auth/service
 * The HTTP Basic auth service: users from an htpasswd file, a typed
 * `authenticate()` face with a cache of verified credentials, reloading, and
 * its HTTP face as a Koa app.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type Koa from 'koa';
import pino from 'pino';
import { DEFAULT_FILE_SIZE_LIMIT, errorText, readBoundedText, readBoundedTextSync, whyUnreadable } from '../files';
import { ERRORS, errorBody, type AuthErrorCode } from '../errors';
import { createAuthApp } from './app';
import { BcryptPoolBusyError, createBcryptPool, DEFAULT_IDLE_MS } from './passwords/bcrypt-pool';
import { DEFAULT_MAX_HEADER_LENGTH, parseBasic, PROBLEM_ERROR, type CredentialsProblem } from './basic';
import { TtlLru } from './cache';
import { connectionKeyer, createHeaderKeyer } from './header-key';
import { parseHtpasswd, UsersFileError, type ParsedUsers, type UserEntry } from './passwords/htpasswd';
import type { AuthDecision, AuthRequest, Authenticator } from './types';
import { bcryptCosts, commonCost, decoyHash, verifyPassword } from './passwords/verify';

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

/** Counters, for tests, metrics and diag. */
export interface AuthStats {
  users: number;
  /** Password checks made, the decoy checks for unknown users included. */
  verifications: number;
  /** Checks refused with 429 because `maxQueued` were already waiting. */
  busy: number;
  cacheHits: number;
  cacheEntries: number;
  /** bcrypt threads running: started by a check, stopped after resting `idleMs`. */
  threads: number;
}

/** The auth service as a gateway module. */
export interface AuthService extends Authenticator {
  readonly name: string;
  /** The HTTP face: any method, any path. */
  readonly app: Koa;
  /**
   * Re-reads the users file. A file with any problem is refused whole (it
   * rejects with a {@link UsersFileError}) and the users before it stay; a
   * good one replaces them and empties the cache.
   */
  reload(): Promise<void>;
  /**
   * Serves users already read and checked (by a folder check that read the
   * file once): they replace the users before them, and the cache is emptied.
   */
  useUsers(parsed: ParsedUsers): void;
  /** Stops watching and the bcrypt threads, and forgets cached credentials. */
  close(): Promise<void>;
  stats(): AuthStats;
}

/** `authenticate` reads the credentials and nothing else of a request. */
const READ_HEADERS: readonly string[] = Object.freeze(['authorization']);

export const DEFAULT_REALM = 'gatehouse';
/** Most lines of the users file warned of one by one at a load. */
const MAX_WARNING_LINES = 100;
export const DEFAULT_CACHE_TTL_MS = 60_000;
export const DEFAULT_CACHE_MAX = 10_000;
/**
 * Credentials used in the last quarter of their time in the cache are
 * checked again in the background, while they are still served: a client in
 * steady use never waits for bcrypt after its first request, so a check
 * a minute does not become that client's tail latency.
 */
const RENEW_AFTER_TTL_FRACTION = 0.75;

/**
 * How long a bcrypt thread rests before it stops, unless told: past the time
 * between two renewals of a client in steady use, so that each renewal finds
 * a thread. A thread started anew runs Node's start-up (tens of ms of CPU)
 * before it can lower its priority, level with the event loop on a core they
 * share, and so would slow the requests around every renewal
 * (figures: bench/results/bcrypt-threads.md).
 */
function restingMs(cacheTtlMs: number): number {
  return Math.max(DEFAULT_IDLE_MS, 2 * cacheTtlMs);
}

/**
 * The header the user's name travels in, as the name's UTF-8 bytes: Node and
 * undici write a header value one byte per character and throw on anything
 * above U+00FF, so a name is turned into that byte string once, here.
 */
export const USER_HEADER = 'x-travel-user';

/** `name`'s UTF-8 bytes, one character each: the same string for an ASCII name. */
function headerValue(name: string): string {
  return Buffer.from(name, 'utf8').toString('latin1');
}

function quoted(value: string): string {
  if (/[\x00-\x1f\x7f]/.test(value)) throw new Error('the realm must not contain control characters');
  return `"${value.replace(/["\\]/g, '\\$&')}"`;
}

function readUsers(file: string, text: string): ParsedUsers {
  const parsed = parseHtpasswd(text);
  if (parsed.problems.length > 0) throw new UsersFileError(file, parsed.problems);
  return parsed;
}

function unreadable(file: string, err: unknown): UsersFileError {
  return new UsersFileError(file, [{ line: 0, message: whyUnreadable(err) }]);
}

/**
 * Builds the auth service. Reads the users file now: a missing or invalid file
 * throws a {@link UsersFileError} listing every problem.
 */
export function createAuthService(options: AuthServiceOptions): AuthService {
  const file = options.usersFile;
  const logger: AuthLogger = options.logger ?? pino({ name: 'auth' });
  const maxHeaderLength = options.maxHeaderLength ?? DEFAULT_MAX_HEADER_LENGTH;
  const challenge = `Basic realm=${quoted(options.realm ?? DEFAULT_REALM)}`;
  const cacheTtlMs = options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS;
  const cache = new TtlLru<string, AuthDecision>({
    max: options.cacheMax ?? DEFAULT_CACHE_MAX,
    ttlMs: cacheTtlMs,
    renewAfterMs: cacheTtlMs * RENEW_AFTER_TTL_FRACTION,
    now: options.now,
  });
  const keyOf = connectionKeyer(createHeaderKeyer());
  const inFlight = new Map<string, Promise<AuthDecision>>();
  const counters = { verifications: 0, busy: 0, cacheHits: 0 };
  const pool = createBcryptPool({
    threads: options.threads,
    maxQueued: options.maxQueued,
    maxWaitMs: options.maxWaitMs,
    niceness: options.niceness,
    idleMs: options.idleMs ?? restingMs(cacheTtlMs),
  });

  const fileSizeLimit = options.fileSizeLimit ?? DEFAULT_FILE_SIZE_LIMIT;
  let initial = options.users;
  if (initial === undefined) {
    let text: string;
    try {
      text = readBoundedTextSync(file, fileSizeLimit);
    } catch (err) {
      throw unreadable(file, err);
    }
    initial = readUsers(file, text);
  }
  let users = initial.users;
  let decoy = decoyHash(commonCost(users.values()));
  // Bumped by every reload, so that a check begun before it does not fill the cache after it.
  let generation = 0;
  announce(initial);

  function announce(parsed: ParsedUsers): void {
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

  /** The decision that refuses with `error` and `headers`, its body written once for every request it answers. */
  function refusal(error: AuthErrorCode, headers: Record<string, string>): AuthDecision {
    const { status, detail } = ERRORS[error];
    return Object.freeze({
      status,
      headers: Object.freeze({ ...headers, 'content-type': 'application/json' }),
      body: JSON.stringify(errorBody(status, detail)),
      detail,
      error,
    });
  }

  const denials = new Map<CredentialsProblem | 'invalid', AuthDecision>();
  for (const [problem, error] of Object.entries(PROBLEM_ERROR))
    denials.set(problem as CredentialsProblem | 'invalid', refusal(error, { 'www-authenticate': challenge }));
  const deny = (problem: CredentialsProblem | 'invalid') => denials.get(problem)!;
  // The challenge stays: the credentials were not refused, only not checked yet.
  const busy = refusal('AUTH_BUSY', { 'www-authenticate': challenge, 'retry-after': '1' });

  function allow(entry: UserEntry): AuthDecision {
    return Object.freeze({
      status: 200,
      headers: Object.freeze({ [USER_HEADER]: headerValue(entry.user), 'content-type': 'application/json' }),
      body: JSON.stringify({ user: entry.user }),
      user: entry.user,
    });
  }

  async function verify(header: string, key: string): Promise<AuthDecision> {
    const startedIn = generation;
    const parsed = parseBasic(header, maxHeaderLength);
    if ('problem' in parsed) return deny(parsed.problem);
    const entry = users.get(parsed.user);
    let matches: boolean;
    try {
      if (entry === undefined) {
        // An unknown user costs a bcrypt check at the most common cost, so timing
        // does not tell it from the users at that cost. Users at another cost
        // (warned about at load) or of a weak scheme do stand out.
        await pool.compare(parsed.password, decoy);
        matches = false;
      } else {
        matches = await verifyPassword(parsed.password, entry, pool.compare);
      }
    } catch (err) {
      if (!(err instanceof BcryptPoolBusyError)) throw err;
      counters.busy++;
      return busy;
    }
    counters.verifications++;
    if (entry === undefined || !matches) return deny('invalid');
    if (startedIn !== generation) {
      // A reload came during the check: a user it removed or gave another
      // password is refused from that moment, this answer included.
      if (users.get(entry.user)?.hash !== entry.hash) return deny('invalid');
      return allow(entry);
    }
    const decision = allow(entry);
    cache.set(key, decision);
    return decision;
  }

  function authenticateNow(request: AuthRequest): AuthDecision | undefined {
    const header = request.headers.authorization;
    if (typeof header !== 'string' || header === '' || header.length > maxHeaderLength) {
      const parsed = parseBasic(header, maxHeaderLength);
      return deny('problem' in parsed ? parsed.problem : 'not-basic');
    }
    const key = keyOf(header, request.connection);
    const hit = cache.get(key);
    if (hit !== undefined) {
      counters.cacheHits++;
      if (cache.hitDue) renew(header, key);
    }
    return hit;
  }

  /**
   * Checks cached credentials again, the cached answer still served
   * meanwhile; their entry is set anew when they still match. A refusal
   * (the pool busy) or a failure leaves the entry to expire, after which a
   * request waits for a check as a first one does.
   */
  function renew(header: string, key: string): void {
    shared(header, key).catch(() => undefined);
  }

  /** The check of `header` under way, or a new one: identical requests arriving together share one. */
  function shared(header: string, key: string): Promise<AuthDecision> {
    const pending = inFlight.get(key);
    if (pending !== undefined) return pending;
    const started = verify(header, key).finally(() => {
      // A reload may have put a newer check under the same key.
      if (inFlight.get(key) === started) inFlight.delete(key);
    });
    inFlight.set(key, started);
    return started;
  }

  function authenticate(request: AuthRequest): Promise<AuthDecision> {
    const known = authenticateNow(request);
    if (known !== undefined) return Promise.resolve(known);
    const header = request.headers.authorization as string;
    return shared(header, keyOf(header, request.connection));
  }

  async function reload(): Promise<void> {
    let parsed: ParsedUsers;
    try {
      const fresh = await readBoundedText(file, fileSizeLimit);
      const candidate = parseHtpasswd(fresh);
      if (candidate.problems.length > 0) throw new UsersFileError(file, candidate.problems);
      parsed = candidate;
    } catch (err) {
      const refused = err instanceof UsersFileError ? err : unreadable(file, err);
      logger.error({ usersFile: file, problems: refused.problems }, 'users file refused; the previous users stay');
      throw refused;
    }
    useUsers(parsed);
  }

  function useUsers(parsed: ParsedUsers): void {
    users = parsed.users;
    decoy = decoyHash(commonCost(users.values()));
    generation++;
    cache.clear();
    // Checks begun against the previous users are not shared with later requests.
    inFlight.clear();
    announce(parsed);
  }

  let watcher: FSWatcher | undefined;
  let debounce: NodeJS.Timeout | undefined;
  if (options.watch) {
    const name = basename(file);
    // The folder is watched, not the file: editors and `htpasswd` replace the file by renaming.
    watcher = watch(dirname(file), { persistent: false }, (_event, changed) => {
      // A Kubernetes Secret or ConfigMap volume changes no file: it swaps the `..data` symlink the file goes through.
      if (changed !== null && changed !== name && !changed.startsWith('..')) return;
      clearTimeout(debounce);
      debounce = setTimeout(() => reload().catch(() => undefined), 50);
      debounce.unref();
    });
    watcher.on('error', (err) =>
      logger.error({ usersFile: file, err: errorText(err) }, 'watching the users file failed'),
    );
  }

  return {
    name: options.name ?? 'auth',
    app: createAuthApp({ authenticate }),
    authenticate,
    authenticateNow,
    requestHeaders: READ_HEADERS,
    reload,
    useUsers,
    async close() {
      clearTimeout(debounce);
      watcher?.close();
      watcher = undefined;
      cache.clear();
      await pool.close();
    },
    stats: () => ({ users: users.size, ...counters, cacheEntries: cache.size, threads: pool.threads }),
  };
}
