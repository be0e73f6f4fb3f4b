/**
 * @module test/ratelimit/grpc/cancelled-calls
 * A real `gatehouse serve ratelimit` process that was stopped while its
 * callers gave up on it: on resuming it finds their calls and their cancels
 * waiting together in its socket, and counts none of those calls.
 */
import assert from 'node:assert/strict';
import {
  createRateLimitClient,
  RateLimitCallError,
  type RateLimitClient,
  type RateLimitRequest,
} from '../../../src/ratelimit';
import { startCli, type CliServer } from '../../support/process';
import { BURST_LIMIT, burstConfigDir } from '../../support/bursts';
import { NO_BOUND_MS } from '../../support/polling';

const request = (value: string, hits?: number): RateLimitRequest => ({
  domain: 'burst',
  descriptors: [{ entries: [{ key: 'k', value }], ...(hits === undefined ? {} : { hitsAddend: hits }) }],
});

describe('calls cancelled while the rate-limit service was stopped', function () {
  this.timeout(120_000);
  let config: { dir: string; remove(): void };
  let server: CliServer;
  let client: RateLimitClient;

  before(async () => {
    config = burstConfigDir();
    server = await startCli(['serve', 'ratelimit', '--port', '0', '--config', config.dir], {
      env: { LOG_LEVEL: 'error' },
    });
    client = createRateLimitClient(server.address, { timeoutMs: NO_BOUND_MS });
    await client.shouldRateLimit(request('warm-up'));
  });
  after(async () => {
    client?.close();
    if (server) {
      server.child.kill('SIGCONT');
      await server.stop();
    }
    config?.remove();
  });

  it('counts none of them, and answers the next call from the counter as it was', async () => {
    const value = `stopped-${process.pid}`;
    server.child.kill('SIGSTOP');
    const given = await Promise.allSettled(
      Array.from({ length: 5 }, () => client.shouldRateLimit(request(value), { timeoutMs: 25 })),
    );
    for (const outcome of given) {
      assert.equal(outcome.status, 'rejected');
      assert.ok(outcome.reason instanceof RateLimitCallError);
    }
    // Sent on the same connection after the cancels, so read by the service after them.
    const checked = client.shouldRateLimit(request(value, 0));
    // HTTP/2 writes what a turn queued at the end of that turn: let the cancels and this call reach the socket.
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    server.child.kill('SIGCONT');
    const answer = await checked;
    assert.equal(answer.overallCode, 'OK');
    assert.equal(answer.statuses[0].limitRemaining, BURST_LIMIT);
    const counted = await client.shouldRateLimit(request(value));
    assert.equal(counted.statuses[0].limitRemaining, BURST_LIMIT - 1);
  });
});
