import assert from 'node:assert/strict';
import type { RateLimitClient } from '../../src/ratelimit';
import type { CliServer } from '../support/process';
import {
  BURST_LIMIT,
  burst,
  burstClients,
  burstConfigDir,
  HITS_MODES,
  startRateLimitProcesses,
  withinOneWindow,
  type BurstOutcome,
  type HitsMode,
} from '../support/bursts';
import { startRedis, type RedisProcess } from '../support/redis';

/** Bursts of each size, and how many of each hits mode: the benchmark runs 5 of each. */
const REPEATS = new Map([
  [1000, 5],
  [3000, 1],
]);

/** What the OK answers of a burst must carry: every hit that fits the limit, each remainder once. */
function assertExact(out: BurstOutcome, size: number, mode: HitsMode, counter: number): void {
  assert.deepEqual(out.errors, {}, 'calls failed while Redis was healthy');
  assert.equal(out.ok + out.overLimit, size);
  assert.equal(counter, out.okHits, 'Redis counted hits that were not answered OK');
  if (mode === 'mixed') {
    // A quarter of the calls bring 1 hit, more than the limit: whatever the order, the counter fills up.
    assert.equal(out.okHits, BURST_LIMIT);
    assert.equal(new Set(out.remaining).size, out.ok, 'two OK answers saw the same count');
    assert.equal(Math.min(...out.remaining), 0);
  } else {
    const fits = Math.floor(BURST_LIMIT / mode);
    assert.equal(out.ok, fits);
    assert.deepEqual(
      [...out.remaining].sort((a, b) => b - a),
      Array.from({ length: fits }, (_, i) => BURST_LIMIT - (i + 1) * mode),
    );
  }
}

describe('exact limits under bursts: 3 gatehouse serve ratelimit processes on one Redis', function () {
  this.timeout(300_000);
  let redis: RedisProcess;
  let config: { dir: string; remove(): void };
  let servers: CliServer[] = [];
  let clients: RateLimitClient[] = [];

  before(async () => {
    redis = await startRedis();
    config = burstConfigDir();
    servers = await startRateLimitProcesses(3, config.dir, redis.url);
    clients = burstClients(servers);
    // Connections open and code warm, as in a service that has been running.
    await burst(clients, 30, 1, 'warm-up');
  });
  after(async () => {
    for (const c of clients) c.close();
    await Promise.all(servers.map((s) => s.stop()));
    await redis?.stop();
    config?.remove();
  });

  for (const [size, repeats] of REPEATS) {
    for (const mode of HITS_MODES) {
      it(`answers OK exactly the hits that fit the limit to ${size} concurrent calls of ${mode} hits (${repeats} bursts), with no error`, async () => {
        for (let r = 0; r < repeats; r++) {
          const { value, out } = await withinOneWindow(async (attempt) => {
            const value = `${size}-${mode}-${r}-${attempt}`;
            return { value, out: await burst(clients, size, mode, value) };
          });
          const keys = await redis.client.keys(`gatehouse:ratelimit:burst_k_${value}_*`);
          assert.equal(keys.length, 1);
          assertExact(out, size, mode, Number(await redis.client.get(keys[0])));
        }
      });
    }
  }
});
