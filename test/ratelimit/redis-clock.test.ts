import assert from 'node:assert/strict';
import { createRedisClockBound } from '../../src/ratelimit/redis/clock';

describe("the bound on Redis's clock", () => {
  it('gives no cutoff before it has seen a reply', () => {
    assert.equal(createRedisClockBound().latest(1000), 0);
  });

  it('takes the latest Redis time a reply allows: the script ran after it was sent, within the millisecond Redis read', () => {
    const clock = createRedisClockBound();
    clock.sample(1000, 50_000);
    assert.equal(clock.latest(1000), 50_001);
  });

  it('keeps the tightest bound its replies give', () => {
    const clock = createRedisClockBound();
    clock.sample(1000, 50_000);
    clock.sample(2000, 51_500); // a slow reply says less
    assert.equal(clock.latest(2000), 51_002);
    clock.sample(3000, 51_999); // a fast one says more
    assert.equal(clock.latest(3000), 52_000);
  });

  it('widens with time, for a Redis clock that runs faster than this one', () => {
    const clock = createRedisClockBound();
    clock.sample(1000, 50_000);
    assert.equal(clock.latest(11_000), 60_011);
  });

  it('follows a Redis clock set forward once told, and forgets everything when cleared', () => {
    const clock = createRedisClockBound();
    clock.sample(1000, 50_000);
    clock.restart(2000, 90_000);
    assert.equal(clock.latest(2000), 90_001);
    clock.clear();
    assert.equal(clock.latest(2000), 0);
  });
});
