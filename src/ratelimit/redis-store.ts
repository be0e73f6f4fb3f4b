/**
 * @module ratelimit/redis-store
 * Counters in Redis, shared by every process that points at it. All the
 * counters of one request are decided by one Lua script, so concurrent
 * requests from several gateways are admitted exactly up to the limit. The
 * client never queues or retries: a Redis that is down or slow makes the
 * call fail within `timeoutMs`, and the caller applies its failure mode.
 */
import { createHash } from 'node:crypto';
import Redis, { type RedisOptions } from 'ioredis';
import type { RateLimitStore, StoreDecision, WindowCheck } from './store';

/**
 * KEYS: the counters. ARGV: per counter, hits, limit, ttl (ms), enforce (1/0).
 * Returns {admitted (1/0), value before, ...}. Reads everything first and
 * writes only when no enforced counter would pass its limit. A counter named
 * twice is read once and checked against its value plus the hits of the
 * earlier checks on it (`seen`), as the memory store counts.
 */
export const DECIDE_SCRIPT = `
local n = #KEYS
local out = {1}
local stored, seen = {}, {}
for i = 1, n do
  local k = KEYS[i]
  if stored[k] == nil then
    stored[k] = tonumber(redis.call('GET', k) or '0')
    seen[k] = stored[k]
  end
  out[i + 1] = stored[k]
  local a = (i - 1) * 4
  local hits = tonumber(ARGV[a + 1])
  if ARGV[a + 4] == '1' and seen[k] + hits > tonumber(ARGV[a + 2]) then out[1] = 0 end
  seen[k] = seen[k] + hits
end
if out[1] == 1 then
  for i = 1, n do
    local a = (i - 1) * 4
    local hits = tonumber(ARGV[a + 1])
    -- A counter that held nothing before its first hits is new: give it its window.
    if hits > 0 and redis.call('INCRBY', KEYS[i], hits) == hits then
      redis.call('PEXPIRE', KEYS[i], ARGV[a + 3])
    end
  end
end
return out
`;

const DECIDE_SHA = createHash('sha1').update(DECIDE_SCRIPT).digest('hex');

export interface RedisStoreOptions {
  /** `redis://[:password@]host:port[/db]`; ignored when `client` is given. */
  url?: string;
  /** A client to use instead of connecting; closed by `close()` all the same. */
  client?: Redis;
  /** Put in front of every counter key, followed by `:` (default `gatehouse:ratelimit`). */
  prefix?: string;
  /** Longest wait for Redis on one decision, in milliseconds (default 100). */
  timeoutMs?: number;
}

export interface RedisStore extends RateLimitStore {
  /** Resolves once connected; rejects if the connection fails first. */
  ready(): Promise<void>;
  readonly client: Redis;
}

/** Options that make a client fail fast instead of queueing behind an outage. */
export function failFastRedisOptions(timeoutMs: number): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    connectTimeout: Math.max(1000, timeoutMs),
    // Keep reconnecting in the background, never more than a second apart.
    retryStrategy: (times) => Math.min(times * 50, 1000),
    lazyConnect: false,
  };
}

/** A Redis store; the service's choice when `REDIS_URL` is set. */
export function createRedisStore(options: RedisStoreOptions = {}): RedisStore {
  const timeoutMs = options.timeoutMs ?? 100;
  const prefix = `${options.prefix ?? 'gatehouse:ratelimit'}:`;
  const client = options.client ?? new Redis(options.url ?? 'redis://127.0.0.1:6379', failFastRedisOptions(timeoutMs));
  // Errors surface through the calls; an unhandled 'error' event would crash the process.
  client.on('error', () => {});

  /** EVALSHA, and EVAL once when Redis does not know the script (a restart, a flush). */
  async function run(n: number, args: (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(DECIDE_SHA, n, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return client.eval(DECIDE_SCRIPT, n, ...args);
    }
  }

  async function decide(checks: readonly WindowCheck[]): Promise<StoreDecision> {
    const n = checks.length;
    const args: (string | number)[] = new Array(n * 5);
    for (let i = 0; i < n; i++) {
      const c = checks[i];
      args[i] = prefix + c.key;
      const a = n + i * 4;
      args[a] = c.hits;
      args[a + 1] = c.limit;
      args[a + 2] = Math.max(1, Math.ceil(c.ttlMs));
      args[a + 3] = c.enforce ? 1 : 0;
    }
    const reply = (await run(n, args)) as number[];
    return { admitted: reply[0] === 1, before: reply.slice(1) };
  }

  function ready(): Promise<void> {
    if (client.status === 'ready') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onReady = () => {
        client.off('error', onError);
        resolve();
      };
      const onError = (err: Error) => {
        client.off('ready', onReady);
        reject(err);
      };
      client.once('ready', onReady);
      client.once('error', onError);
    });
  }

  return {
    kind: 'redis',
    client,
    decide,
    ready,
    async close() {
      if (client.status === 'end') return;
      await client.quit().catch(() => client.disconnect());
    },
  };
}
