import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createSliceGate, runAtOnce, sortSteps, type Steps } from '../../src/gateway/slices';

/** Work of `count` steps, each noted in `log` as `name` and its number. */
function* noted(log: string[], name: string, count: number): Steps<string> {
  for (let i = 1; i <= count; i++) {
    log.push(`${name}${i}`);
    if (i < count) yield;
  }
  return name;
}

describe('gateway slices', () => {
  describe('a slice gate', () => {
    it('runs work that finds it idle at once, to its end within the slice', async () => {
      const gate = createSliceGate(Number.POSITIVE_INFINITY);
      const log: string[] = [];
      let turned = false;
      setImmediate(() => (turned = true));
      assert.equal(await gate.run(noted(log, 'a', 3)), 'a');
      assert.deepEqual(log, ['a1', 'a2', 'a3']);
      assert.equal(turned, false, 'no turn of the event loop was waited for');
    });

    it('gives the works under way one slice a turn between them, in the order they asked for one, the event loop turning in between', async () => {
      // Slices of no time: each step is a slice of its own.
      const gate = createSliceGate(0);
      const log: string[] = [];
      let turns = 0;
      let turning = true;
      const turn = async () => {
        while (turning) {
          log.push(`turn ${++turns}`);
          await nextTurn();
        }
      };
      const turner = turn();
      const done = await Promise.all([gate.run(noted(log, 'a', 3)), gate.run(noted(log, 'b', 3))]);
      turning = false;
      await turner;
      assert.deepEqual(done, ['a', 'b']);
      const steps = log.filter((entry) => !entry.startsWith('turn'));
      // a began at once and asked for its next slice before b began: b waits behind it, then they take turns.
      assert.deepEqual(steps, ['a1', 'a2', 'b1', 'a3', 'b2', 'b3']);
      // Never two steps without a turn of the loop between them (the first ran as it began).
      for (let i = 1; i < log.length; i++) {
        if (!log[i].startsWith('turn'))
          assert.ok(log[i - 1].startsWith('turn') || i === 1, `${log[i - 1]} then ${log[i]}: ${log.join(', ')}`);
      }
    });

    it('lets work begin at once only once a turn: a second work begun after the slice waits for the next', async () => {
      const gate = createSliceGate(0);
      assert.equal(gate.begin(), undefined);
      let turned = false;
      setImmediate(() => (turned = true));
      const waited = gate.begin();
      assert.ok(waited instanceof Promise);
      await waited;
      assert.equal(turned, true);
    });

    it('ends a work whose step throws with that error, and serves the others', async () => {
      const gate = createSliceGate(0);
      function* failing(): Steps<never> {
        yield;
        throw new Error('the step failed');
      }
      const log: string[] = [];
      const [failed, other] = await Promise.allSettled([gate.run(failing()), gate.run(noted(log, 'b', 2))]);
      assert.deepEqual(failed, { status: 'rejected', reason: new Error('the step failed') });
      assert.deepEqual(other, { status: 'fulfilled', value: 'b' });
    });
  });

  it('sorts in steps as Array.prototype.sort does, keeping the order of equal items', () => {
    const items = Array.from({ length: 5000 }, (_, i) => ({ key: (i * 7919) % 97, at: i }));
    const byKey = (a: { key: number }, b: { key: number }) => a.key - b.key;
    assert.deepEqual(runAtOnce(sortSteps(items, byKey)), [...items].sort(byKey));
  });
});
