import assert from 'node:assert/strict';
import { createRouteCounters, TRAFFIC_MINUTES } from '../../src/telemetry';

/** A clock a test moves, in ms since 1970, starting at the first second of a minute. */
function testClock(): { now: () => number; advance(ms: number): void } {
  let t = 29_000_000 * 60_000;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

const zeros = (n: number) => new Array<number>(n).fill(0);

describe('route counters', () => {
  it('count requests, 4xx and 5xx answers by route and in all since the start', () => {
    const counters = createRouteCounters();
    for (const status of [200, 204, 404, 429, 502]) counters.record('hotels', status);
    counters.record('unmatched', 404);
    assert.deepEqual(counters.get('hotels'), { requests: 5, clientErrors: 2, errors: 1 });
    assert.deepEqual(counters.get('never'), { requests: 0, clientErrors: 0, errors: 0 });
    assert.deepEqual(counters.totals(), { requests: 6, clientErrors: 3, errors: 1 });
    assert.deepEqual(
      [...counters.entries()].map(([route, counts]) => [route, counts.requests]),
      [
        ['hotels', 5],
        ['unmatched', 1],
      ],
    );
  });

  it('count each of the last minutes apart, the minute under way last', () => {
    const clock = testClock();
    const counters = createRouteCounters({ now: clock.now });
    counters.record('hotels', 200);
    counters.record('hotels', 503);
    clock.advance(60_000);
    counters.record('hotels', 404);
    clock.advance(59_999);
    counters.record('hotels', 200);
    clock.advance(1);
    counters.record('cars', 200);
    const hotels = counters.recent('hotels');
    assert.equal(hotels.requests.length, TRAFFIC_MINUTES);
    assert.deepEqual(hotels.requests.slice(-3), [2, 2, 0]);
    assert.deepEqual(hotels.errors.slice(-3), [1, 0, 0]);
    assert.deepEqual(hotels.clientErrors.slice(-3), [0, 1, 0]);
    assert.deepEqual(counters.recent().requests.slice(-3), [2, 2, 1]);
    assert.equal(counters.recentRequests('hotels'), 4);
    assert.equal(counters.recentRequests('never'), 0);
    assert.equal(counters.minute(), Math.floor(clock.now() / 60_000));
    assert.deepEqual(counters.recent('never').requests, zeros(TRAFFIC_MINUTES));
  });

  it('forget a minute once it is older than the window, and a slot taken again by a later minute', () => {
    const clock = testClock();
    const counters = createRouteCounters({ now: clock.now });
    counters.record('hotels', 500);
    clock.advance((TRAFFIC_MINUTES - 1) * 60_000);
    assert.deepEqual(counters.recent('hotels').errors, [1, ...zeros(TRAFFIC_MINUTES - 1)]);
    clock.advance(60_000);
    // The first minute's slot is the minute under way now: it starts again from zero.
    assert.deepEqual(counters.recent('hotels').errors, zeros(TRAFFIC_MINUTES));
    assert.equal(counters.recentRequests('hotels'), 0);
    counters.record('hotels', 200);
    assert.deepEqual(counters.recent('hotels').requests, [...zeros(TRAFFIC_MINUTES - 1), 1]);
    assert.deepEqual(counters.recent('hotels').errors, zeros(TRAFFIC_MINUTES));
    // Since the start, nothing is forgotten.
    assert.deepEqual(counters.get('hotels'), { requests: 2, clientErrors: 0, errors: 1 });
  });

  it('read a long pause as minutes without requests', () => {
    const clock = testClock();
    const counters = createRouteCounters({ now: clock.now });
    counters.record('hotels', 200);
    clock.advance(3 * 60 * 60_000);
    assert.deepEqual(counters.recent().requests, zeros(TRAFFIC_MINUTES));
  });
});
