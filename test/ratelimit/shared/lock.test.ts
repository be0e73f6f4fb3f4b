/**
 * @module test/ratelimit/shared/lock
 * Threads deciding at once on shared counters admit exactly what one thread
 * deciding alone admits, keep each request's counters all-or-nothing, and
 * go on when a thread ends while it holds the table.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import {
  createSharedCounters,
  createSharedStore,
  releaseAbandonedLock,
  type SharedCounters,
} from '../../../src/ratelimit';
import { decideOnThreads, SHARED_MODULE } from '../../support/counter-threads';
import { check } from '../../support/store-behaviour';

const valueOf = (counters: SharedCounters, key: string): number =>
  createSharedStore(counters).decide([check(key, { hits: 0 })]).before[0];

const LONG = 60_000;

describe('shared counters across threads', () => {
  it('admit exactly 3 of 48 requests spread over 4 threads against a limit of 3', async () => {
    const counters = createSharedCounters();
    const plan = { checks: [check('route_alice_1700000000', { limit: 3, ttlMs: LONG })], times: 12 };
    const admitted = await decideOnThreads(counters, [plan, plan, plan, plan]);
    assert.equal(
      admitted.reduce((sum, n) => sum + n, 0),
      3,
      `admitted per thread: ${admitted.join(', ')}`,
    );
    assert.equal(valueOf(counters, 'route_alice_1700000000'), 3);
  });

  it('count every hit of 5 threads, this one included, racing on one counter', async () => {
    const counters = createSharedCounters();
    const plan = { checks: [check('hot', { limit: 50_000, ttlMs: LONG })], times: 20_000 };
    const admitted = await decideOnThreads(counters, [plan, plan, plan, plan], plan);
    assert.equal(
      admitted.reduce((sum, n) => sum + n, 0),
      50_000,
      `admitted per thread: ${admitted.join(', ')}`,
    );
    assert.equal(valueOf(counters, 'hot'), 50_000);
  });

  it('count both descriptors of a request or neither, whichever thread decides it', async () => {
    const counters = createSharedCounters();
    // Two threads count on a and b, two on b and c: b fills up first for one pair or the other.
    const ab = {
      checks: [check('a', { limit: 20_000, ttlMs: LONG }), check('b', { limit: 30_000, ttlMs: LONG })],
      times: 20_000,
    };
    const bc = {
      checks: [check('b', { limit: 30_000, ttlMs: LONG }), check('c', { limit: 1e9, ttlMs: LONG })],
      times: 20_000,
    };
    const [ab1, ab2, bc1, bc2] = await decideOnThreads(counters, [ab, ab, bc, bc]);
    assert.equal(ab1 + ab2 + bc1 + bc2, 30_000);
    assert.equal(valueOf(counters, 'b'), 30_000);
    assert.equal(valueOf(counters, 'a'), ab1 + ab2);
    assert.ok(ab1 + ab2 <= 20_000, `a admitted ${ab1 + ab2}`);
    assert.equal(valueOf(counters, 'c'), bc1 + bc2);
  });

  it('go on deciding once the lock of a thread stopped in the middle of a decision is released', async () => {
    const counters = createSharedCounters();
    // Its clock, read under the lock, never returns: the thread is stopped holding it.
    const stuck = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       require('tsx/cjs');
       const { createSharedStore } = require(workerData.module);
       const never = new Int32Array(new SharedArrayBuffer(4));
       const store = createSharedStore(workerData.counters, {
         now: () => {
           parentPort.postMessage('holding');
           Atomics.wait(never, 0, 0);
           return 0;
         },
       });
       store.decide([{ key: 'k', hits: 1, limit: 5, ttlMs: 60000, enforce: true }]);`,
      { eval: true, workerData: { module: SHARED_MODULE, counters } },
    );
    const stuckThread = stuck.threadId;
    await once(stuck, 'message');
    // A thread that asks meanwhile waits for the lock.
    const waiting = decideOnThreads(counters, [{ checks: [check('k', { limit: 5, ttlMs: LONG })], times: 1 }]);
    await stuck.terminate();
    assert.equal(releaseAbandonedLock(counters, stuckThread), true);
    assert.deepEqual(await waiting, [1]);
    assert.equal(releaseAbandonedLock(counters, stuckThread), false);
    assert.equal(valueOf(counters, 'k'), 1);
  });
});
