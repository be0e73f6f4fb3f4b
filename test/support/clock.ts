/**
 * @module test/support/clock
 * A clock for the code that takes `now` as an option: time moves only
 * when a test moves it.
 */

/** A clock that moves only when a test moves it. */
export function testClock(): { now: () => number; advance(ms: number): void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => void (t += ms) };
}
