import assert from 'node:assert/strict';
import { attentionDeadline, withinDeadline } from '../../src/ratelimit/deadline';

/** Holds the event loop, as a burst of requests would. */
const holdEventLoop = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const never = () => new Promise<never>(() => {});

describe('rate-limit deadlines', () => {
  it('credits a step that fired late with at most twice its length: the time the event loop was held up does not count', async () => {
    const credits: number[] = [];
    const started = performance.now();
    await new Promise<void>((resolve) => {
      attentionDeadline((credited) => {
        credits.push(credited);
        if (credited >= 20) {
          resolve();
          return Infinity;
        }
        return 20 - credited;
      });
      holdEventLoop(100);
    });
    assert.equal(credits[0], 0);
    // The first step (5 ms) fired 100 ms late: 10 ms credited, not 100.
    assert.equal(credits[1], 10);
    assert.ok(credits.length >= 3);
    assert.ok(performance.now() - started >= 110);
  });

  it('gives up once the budget has passed while the event loop was free', async () => {
    const started = performance.now();
    await assert.rejects(
      withinDeadline(30, never, () => new Error('no answer')),
      /no answer/,
    );
    assert.ok(performance.now() - started >= 30);
  });

  it('settles with the answer, and tells the asker once it has been given up on', async () => {
    assert.equal(
      await withinDeadline(
        30,
        async () => 'answer',
        () => new Error('late'),
      ),
      'answer',
    );
    let gone: (() => boolean) | undefined;
    await assert.rejects(
      withinDeadline(
        20,
        (g) => {
          gone = g;
          return never();
        },
        () => new Error('late'),
      ),
    );
    assert.equal(gone!(), true);
  });

  it('gives up as soon as the caller has left', async () => {
    let left = false;
    const answer = withinDeadline(
      10_000,
      never,
      () => new Error('given up'),
      () => left,
    );
    left = true;
    await assert.rejects(answer, /given up/);
  });
});
