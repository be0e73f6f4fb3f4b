/**
 * @module ratelimit/redis/store
 * Counters in Redis, shared by every process that points at it. The
 * decisions asked for in one turn of the event loop go to Redis together, as
 * one script call (see ./script), so a burst shares its round trips and
 * concurrent requests from several processes are admitted exactly up to the
 * limit.
 *
 * A decision is counted if and only if it is answered. Its deadline (its
 * caller's, else the store's `timeoutMs`) starts when it is sent, and counts
 * this process's attention (see ../deadline): a timer that fires late, the
 * event loop being busy, never turns a decision that arrived into a failure.
 * A decision that fails its deadline counted nothing: the script is told the
 * latest time its caller may still wait, in Redis's own time, and counts
 * nothing past it; and should a decision that did count come back after its
 * caller gave up, its hits are taken back.
 */
import type { Redis } from 'ioredis';
import { attentionDeadline, HELD_UP_MAX_MS, monotonicNow as clock } from '../deadline';
import {
  CallerGoneError,
  StoreTimeoutError,
  type DecideOptions,
  type RateLimitStore,
  type StoreDecision,
  type WindowCheck,
} from '../store';
import { settle, type Batch, type Pending } from './batch';
import { connect, failFastRedisOptions, whenReady, withScripts } from './client';
import { createRedisClockBound } from './clock';
import { addedHits, countersBefore, decideArguments, DECISION_STATE, uncountable, undoArguments } from './script';

export { failFastRedisOptions } from './client';

export interface RedisStoreOptions {
  /** `redis://[:password@]host:port[/db]`; ignored when `client` is given. */
  url?: string;
  /**
   * A client to use instead of connecting; closed by `close()` all the same.
   * Leave its `commandTimeout` unset: the store keeps its own deadlines.
   */
  client?: Redis;
  /** Put in front of every counter key, followed by `:` (default `gatehouse:ratelimit`). */
  prefix?: string;
  /**
   * Wait for Redis on one decision whose caller sets no deadline of its own,
   * in ms from when it is sent, counting only the time the process was free
   * to read the answer (default 100).
   */
  timeoutMs?: number;
}

/** What the store has done since it was made. */
export interface RedisStoreStats {
  /** Script calls sent. */
  batches: number;
  /** Decisions sent in them. */
  decisions: number;
  /** Decisions that failed their deadline. */
  late: number;
  /** Decisions Redis counted after their caller had given up, taken back. */
  takenBack: number;
}

export interface RedisStore extends RateLimitStore {
  decide(checks: readonly WindowCheck[], options?: DecideOptions): Promise<StoreDecision>;
  /** Resolves once connected; rejects if the connection fails first. */
  ready(): Promise<void>;
  readonly client: Redis;
  stats(): RedisStoreStats;
}

/**
 * Checks one script call carries, about (a few ms of Redis's time): a longer
 * call would hold Redis, and every other client of it, for longer.
 */
const MAX_CHECKS_PER_CALL = 2000;

/** A Redis store; the service's choice when `REDIS_URL` is set. */
export function createRedisStore(options: RedisStoreOptions = {}): RedisStore {
  const timeoutMs = options.timeoutMs ?? 100;
  const prefix = `${options.prefix ?? 'gatehouse:ratelimit'}:`;
  const client = options.client ?? connect(options.url ?? 'redis://127.0.0.1:6379', failFastRedisOptions(timeoutMs));
  const scripts = withScripts(client);
  // Errors surface through the calls; an unhandled 'error' event would crash the process.
  client.on('error', () => {});
  const redisClock = createRedisClockBound();
  // A new connection may be to another server, with another clock.
  client.on('ready', () => redisClock.clear());

  const stats: RedisStoreStats = { batches: 0, decisions: 0, late: 0, takenBack: 0 };
  let waiting: Pending[] = [];
  let flushing = false;
  let closed = false;

  function decide(checks: readonly WindowCheck[], opts?: DecideOptions): Promise<StoreDecision> {
    if (closed) return Promise.reject(new Error('the Redis store is closed'));
    // Redis is away: fail now rather than queue behind the outage.
    if (client.status !== 'ready') return Promise.reject(new Error(`Redis is not connected (${client.status})`));
    // A check the script cannot count fails here, alone: in the script call it would fail every decision the call carries.
    for (const c of checks) {
      const why = uncountable(c);
      if (why !== undefined) return Promise.reject(new RangeError(`rate-limit check ${c.key}: ${why}`));
    }
    const limit = opts?.timeoutMs ?? timeoutMs;
    return new Promise((resolve, reject) => {
      enqueue({ checks, cutoff: 0, timeoutMs: limit, gone: opts?.gone, resolve, reject, capAt: 0, settled: false });
    });
  }

  function enqueue(d: Pending): void {
    waiting.push(d);
    if (flushing) return;
    flushing = true;
    // After the I/O of this turn: every decision it asked for goes in one call.
    setImmediate(flush);
  }

  function flush(): void {
    flushing = false;
    const now = clock();
    let batch: Pending[] = [];
    let checks = 0;
    for (const d of waiting) {
      if (d.gone?.()) settle(d, new CallerGoneError());
      else if (d.capAt !== 0 && d.capAt <= now) late(d);
      else {
        if (d.capAt === 0) d.capAt = now + d.timeoutMs + HELD_UP_MAX_MS;
        d.cutoff = redisClock.latest(d.capAt);
        batch.push(d);
        checks += d.checks.length;
        if (checks >= MAX_CHECKS_PER_CALL) {
          send(batch, now);
          batch = [];
          checks = 0;
        }
      }
    }
    waiting = [];
    if (batch.length > 0) send(batch, now);
  }

  function send(decisions: Pending[], sentAt: number): void {
    const batch: Batch = { decisions, sentAt, deadline: undefined, answered: false };
    const { keys, args } = decideArguments(decisions, prefix);
    stats.batches++;
    stats.decisions += decisions.length;
    scripts.gatehouseRateLimitDecide(keys, args).then(
      (reply) => answered(batch, reply),
      (err: Error) => failed(batch, err),
    );
    batch.deadline = attentionDeadline((credited) => judge(batch, credited));
  }

  function late(d: Pending): void {
    stats.late++;
    settle(d, new StoreTimeoutError(d.timeoutMs));
  }

  /** Fails the decisions of a batch that are due; the attention the others still need. */
  function judge(batch: Batch, credited: number): number {
    if (batch.answered) return Infinity;
    const now = clock();
    let need = Infinity;
    for (const d of batch.decisions) {
      if (d.settled) continue;
      if (d.gone?.()) settle(d, new CallerGoneError());
      else if (credited >= d.timeoutMs || now >= d.capAt) late(d);
      else need = Math.min(need, d.timeoutMs - credited, d.capAt - now);
    }
    return need;
  }

  function answered(batch: Batch, reply: number[]): void {
    batch.answered = true;
    batch.deadline?.stop();
    const now = clock();
    redisClock.sample(batch.sentAt, reply[0]);
    let undo: WindowCheck[][] | undefined;
    let offset = 1;
    for (const d of batch.decisions) {
      const state = reply[offset];
      const at = offset;
      offset += 1 + d.checks.length;
      const gone = !d.settled && d.gone?.() === true;
      if (state === DECISION_STATE.admitted && (d.settled || gone)) {
        // Counted, but its caller has been told otherwise or has left: take back what it added.
        (undo ??= []).push(addedHits(d.checks, countersBefore(reply, at, d.checks.length)));
        stats.takenBack++;
      }
      if (d.settled) continue;
      if (gone) settle(d, new CallerGoneError());
      else if (state === DECISION_STATE.pastCutoff) {
        if (now < d.capAt) {
          // Run in time, yet past its cutoff: Redis's clock was set forward. Learn it, and ask again.
          redisClock.restart(batch.sentAt, reply[0]);
          enqueue(d);
        } else late(d);
      } else if (state === DECISION_STATE.notCounter)
        settle(d, new Error('a rate-limit counter in Redis holds something other than a count'));
      else {
        d.settled = true;
        d.resolve({ admitted: state === DECISION_STATE.admitted, before: countersBefore(reply, at, d.checks.length) });
      }
    }
    if (undo) takeBack(undo);
  }

  function failed(batch: Batch, err: Error): void {
    batch.answered = true;
    batch.deadline?.stop();
    // The decisions already given up on may or may not have run: a
    // connection that broke after the script did leaves no word of it.
    for (const d of batch.decisions) if (!d.settled) settle(d, err);
  }

  function takeBack(decisions: WindowCheck[][]): void {
    const { keys, args } = undoArguments(decisions, prefix);
    // Should Redis fail now, the hits stay counted until their window ends: the limit errs strict.
    if (keys > 0) scripts.gatehouseRateLimitUndo(keys, args).catch(() => {});
  }

  return {
    kind: 'redis',
    client,
    decide,
    ready: () => whenReady(client),
    stats: () => ({ ...stats }),
    async close() {
      closed = true;
      if (client.status === 'end') return;
      // Not connected: nothing to quit, only attempts to reconnect to end.
      if (client.status !== 'ready') {
        client.disconnect();
        return;
      }
      // QUIT is answered after every script already sent: their decisions settle first.
      await client.quit().catch(() => client.disconnect());
    },
  };
}
