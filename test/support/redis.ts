/**
 * @module test/support/redis
 * A throwaway redis-server on a free loopback port, for the tests that need a
 * real Redis. It never touches a Redis it did not start.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import Redis from 'ioredis';
import { createRedisStore, type RedisStore, type RedisStoreOptions } from '../../src/ratelimit';
import { freePort } from './ports';
import { NO_BOUND_MS } from './polling';
import { startedInHooks } from './started-in-hooks';

export interface RedisProcess {
  readonly port: number;
  /** The redis-server process. */
  readonly pid: number;
  readonly url: string;
  /** A plain client for assertions (closed by `stop()`). */
  readonly client: Redis;
  /** Kills the server at once, as a crash would. */
  kill(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered. */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). */
  resume(): void;
  /** Closes the client and kills the server, if still running. */
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts redis-server (on `port`, or a free one) and resolves once it answers PING. */
export async function startRedis(options: { port?: number } = {}): Promise<RedisProcess> {
  const port = options.port ?? (await freePort());
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Ready to accept connections')) {
        child.stdout.off('data', onData);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.once('error', (err) => reject(new Error(`redis-server could not start (is it installed?): ${err.message}`)));
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
  });
  child.stdout.resume();
  child.stderr.resume();
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  if ((await client.ping()) !== 'PONG') throw new Error('redis-server does not answer PING');

  async function kill(): Promise<void> {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited(child);
  }
  return {
    port,
    pid: child.pid!,
    url,
    client,
    kill,
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async stop() {
      client.disconnect();
      await kill();
    },
  };
}

/**
 * Holds this process's event loop, as a burst of requests would, until
 * `redis-cli -p <port> <command...>` prints `expected` (so that Redis's
 * answer to a script that made it so is on its way), then for `ms` more.
 */
export function holdEventLoopUntil(port: number, command: readonly string[], expected: string, ms: number): void {
  while (execFileSync('redis-cli', ['-p', String(port), ...command], { encoding: 'utf8' }).trim() !== expected);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** A redis-server shared by the tests of a describe block, and the stores made on it. */
export interface TestRedis extends RedisProcess {
  /**
   * A store on this server (its URL unless `options` say otherwise), closed
   * after the block; its decisions wait for Redis without a deadline unless
   * `options` set one.
   */
  store(options?: RedisStoreOptions): RedisStore;
}

/**
 * Starts a redis-server before the tests of the calling describe block,
 * resumes and flushes it before each test, and stops it after them, once
 * the stores made with `store()` are closed.
 */
export function useRedis(): TestRedis {
  const stores: RedisStore[] = [];
  const started = startedInHooks('the redis-server', startRedis, async (server) => {
    await Promise.all(stores.map((s) => s.close()));
    await server.stop();
  });
  beforeEach(async () => {
    started().resume();
    await started().client.flushall();
  });
  return {
    get port() {
      return started().port;
    },
    get pid() {
      return started().pid;
    },
    get url() {
      return started().url;
    },
    get client() {
      return started().client;
    },
    kill: () => started().kill(),
    pause: () => started().pause(),
    resume: () => started().resume(),
    stop: () => started().stop(),
    store(options = {}) {
      // A decision waits for Redis as long as the test lets it, unless the test is about a deadline and sets one.
      const s = createRedisStore({ url: started().url, timeoutMs: NO_BOUND_MS, ...options });
      stores.push(s);
      return s;
    },
  };
}
