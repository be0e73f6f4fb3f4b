import assert from 'node:assert/strict';
import type { Pool } from 'undici';
import type { CliServer } from '../../../support/process';
import {
  BURST_LIMIT,
  gatewayBurst,
  gatewayConfigDir,
  gatewayPools,
  startGateways,
  withinOneWindow,
} from '../../../support/bursts';
import { startRedis, type RedisProcess } from '../../../support/redis';
import { NO_BOUND_MS } from '../../../support/polling';

const SIZE = 1000;
const REPEATS = 3;

describe('exact limits under bursts: 3 gateways (gatehouse start) on one Redis', function () {
  let redis: RedisProcess;
  let config: { dir: string; remove(): void };
  let gateways: CliServer[] = [];
  let pools: Pool[] = [];

  before(async () => {
    redis = await startRedis();
    // No budget for Redis: on a machine loaded by anything else a healthy Redis
    // may wait for a core past any, and a decision timed out is let through.
    config = gatewayConfigDir({ timeoutMs: NO_BOUND_MS });
    gateways = await startGateways(3, config.dir, redis.url);
    pools = gatewayPools(gateways, SIZE);
    // Connections open and alice's credentials verified once, as in gateways that have been running.
    assert.deepEqual(await gatewayBurst(pools, 30), { 200: 30 });
  });
  after(async () => {
    await Promise.all(pools.map((p) => p.close()));
    await Promise.all(gateways.map((g) => g.stop()));
    await redis?.stop();
    config?.remove();
  });

  it(`answers 200 to exactly the limit of ${SIZE} concurrent labelled requests and 429 to the rest, letting none through by a timeout`, async () => {
    for (let r = 0; r < REPEATS; r++) {
      const { value, statuses } = await withinOneWindow(async (attempt) => {
        const value = `burst-${r}-${attempt}`;
        return { value, statuses: await gatewayBurst(pools, SIZE, value) };
      });
      assert.deepEqual(statuses, { 200: BURST_LIMIT, 429: SIZE - BURST_LIMIT });
      const keys = await redis.client.keys(`gatehouse:ratelimit:gateway_x-gateway-test-allow_${value}_*`);
      assert.equal(keys.length, 1);
      assert.equal(await redis.client.get(keys[0]), String(BURST_LIMIT));
    }
    for (const g of gateways) assert.doesNotMatch(g.output().stdout, /rate-limit (service|store) unavailable/);
  });
});
