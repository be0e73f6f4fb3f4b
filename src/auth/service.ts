/**
 * @module auth/service
 * The HTTP Basic auth service: users from an htpasswd file, a typed
 * `authenticate()` face with a cache of verified credentials, reloading, and
 * its HTTP face as a Koa app.
 */
import type Koa from 'koa';
import pino from 'pino';
import { DEFAULT_FILE_SIZE_LIMIT } from '../files';
import { createAuthApp } from './app';
import { DEFAULT_MAX_HEADER_LENGTH, parseBasic } from './basic';
import { TtlLru } from './cache';
import { allowUser, basicChallenge, createRefusals } from './decisions';
import { connectionKeyer, createHeaderKeyer } from './header-key';
import { BcryptPoolBusyError, createBcryptPool } from './passwords/bcrypt-pool';
import { DEFAULT_IDLE_MS } from './passwords/bcrypt-settings';
import type { ParsedUsers, UsersFileError } from './passwords/htpasswd';
import { commonCost, decoyHash, verifyPassword } from './passwords/verify';
import {
  DEFAULT_CACHE_MAX,
  DEFAULT_CACHE_TTL_MS,
  DEFAULT_REALM,
  type AuthLogger,
  type AuthServiceOptions,
} from './service-options';
import type { AuthDecision, AuthRequest, Authenticator } from './types';
import { logUsersLoaded, readUsersFile, readUsersFileSync, watchUsersFile, type UsersFileWatch } from './users-file';

export { USER_HEADER } from './decisions';
export { DEFAULT_CACHE_MAX, DEFAULT_CACHE_TTL_MS, DEFAULT_REALM, type AuthLogger, type AuthServiceOptions };

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
 * Builds the auth service. Reads the users file now: a missing or invalid file
 * throws a {@link UsersFileError} listing every problem.
 */
export function createAuthService(options: AuthServiceOptions): AuthService {
  const file = options.usersFile;
  const logger: AuthLogger = options.logger ?? pino({ name: 'auth' });
  const maxHeaderLength = options.maxHeaderLength ?? DEFAULT_MAX_HEADER_LENGTH;
  const challenge = basicChallenge(options.realm ?? DEFAULT_REALM);
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
  const initial = options.users === undefined ? readUsersFileSync(file, fileSizeLimit) : options.users;
  let users = initial.users;
  let decoy = decoyHash(commonCost(users.values()));
  // Bumped by every reload, so that a check begun before it does not fill the cache after it.
  let generation = 0;
  logUsersLoaded(logger, file, initial);

  const { deny, busy } = createRefusals(challenge);

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
      return allowUser(entry);
    }
    const decision = allowUser(entry);
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
      parsed = await readUsersFile(file, fileSizeLimit);
    } catch (err) {
      const refused = err as UsersFileError;
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
    logUsersLoaded(logger, file, parsed);
  }

  let usersWatch: UsersFileWatch | undefined;
  if (options.watch) usersWatch = watchUsersFile(file, () => reload().catch(() => undefined), logger);

  return {
    name: options.name ?? 'auth',
    app: createAuthApp({ authenticate }),
    authenticate,
    authenticateNow,
    requestHeaders: READ_HEADERS,
    reload,
    useUsers,
    async close() {
      usersWatch?.close();
      usersWatch = undefined;
      cache.clear();
      await pool.close();
    },
    stats: () => ({ users: users.size, ...counters, cacheEntries: cache.size, threads: pool.threads }),
  };
}
