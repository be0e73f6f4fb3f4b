/**
 * @module ratelimit/redis/client
 * The Redis client of the store: options that fail fast rather than queue
 * behind an outage, the store's scripts as commands of it, and waiting for
 * it to connect.
 */
import type { Redis, RedisOptions } from 'ioredis';
import { DECIDE_SCRIPT, UNDO_SCRIPT } from './script';

/** Longest wait between two attempts to reconnect to a Redis that went away. */
const RECONNECT_MAX_MS = 250;

/** Options that make a client fail fast instead of queueing behind an outage. */
export function failFastRedisOptions(timeoutMs: number): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // A script sent again on a new connection would count a decision already answered as failed.
    autoResendUnfulfilledCommands: false,
    connectTimeout: Math.max(1000, timeoutMs),
    // Keep reconnecting in the background, at least 4 times a second: a
    // Redis that comes back after a long outage decides again within 400 ms.
    retryStrategy: (times) => Math.min(times * 50, RECONNECT_MAX_MS),
    lazyConnect: false,
    // How long a closed client waits for its socket to close before destroying it. ioredis
    // starts that wait for a socket already gone too (closed while reconnecting), where
    // nothing ends it: its default, 2 s, kept a stopped process alive that long.
    disconnectTimeout: 200,
  };
}

/**
 * A client of `url`. ioredis is loaded here, at the first store made, not
 * with the module: every process of the package (a check, a module served
 * alone, a gateway without Redis) would pay for it at start, a tenth of it.
 */
export function connect(url: string, options: RedisOptions): Redis {
  const { Redis: Client } = require('ioredis') as typeof import('ioredis');
  return new Client(url, options);
}

/** The scripts, as commands of the client (ioredis sends EVALSHA, and EVAL once Redis has forgotten the script). */
export interface ScriptedClient {
  gatehouseRateLimitDecide(keys: number, args: (string | number)[]): Promise<number[]>;
  gatehouseRateLimitUndo(keys: number, args: (string | number)[]): Promise<unknown>;
}

/** `client`, with the store's scripts defined on it. */
export function withScripts(client: Redis): ScriptedClient {
  client.defineCommand('gatehouseRateLimitDecide', { lua: DECIDE_SCRIPT });
  client.defineCommand('gatehouseRateLimitUndo', { lua: UNDO_SCRIPT });
  return client as unknown as ScriptedClient;
}

/** Resolves once `client` is connected; rejects if the connection fails first. */
export function whenReady(client: Redis): Promise<void> {
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
