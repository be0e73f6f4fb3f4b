/**
 * @module test/workers/restarts
 * When a worker that died is started again: at once, then after a back-off
 * that doubles, and never once deaths come fast enough to make a loop.
 */
import assert from 'node:assert/strict';
import { CRASH_LIMIT, CRASH_WINDOW_MS } from '../../src/workers';
import { restartPolicy } from '../../src/workers/restarts';

describe('the restarts of a dead worker', () => {
  it('starts the first again at once, then backs off, doubling', () => {
    const policy = restartPolicy();
    const waits = Array.from({ length: CRASH_LIMIT - 1 }, (_, i) => policy.died(i));
    assert.deepEqual(waits, [0, 100, 200, 400].slice(0, CRASH_LIMIT - 1));
  });

  it('gives up when the limit of deaths comes within the window', () => {
    const policy = restartPolicy();
    for (let i = 0; i < CRASH_LIMIT - 1; i++) assert.notEqual(policy.died(i * 1000), undefined);
    assert.equal(policy.died(CRASH_LIMIT * 1000), undefined);
    assert.equal(policy.recent, CRASH_LIMIT);
  });

  it('forgets deaths older than the window: a worker that dies once a while is always started again', () => {
    const policy = restartPolicy();
    for (let i = 0; i < 4 * CRASH_LIMIT; i++) assert.equal(policy.died(i * CRASH_WINDOW_MS), 0);
  });
});
