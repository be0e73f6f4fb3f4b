/**
 * @module test/support/polling
 * Waiting for a state that changes with no event to wait on, and the bound
 * a test sets where it must give one but waits as long as it takes.
 */

/**
 * The deadline, timeout or bound a test that is not about time gives an
 * option (a client's deadline, a store's, a Mapping's `timeout_ms`): past
 * the test's own timeout, so that on a loaded machine a slow answer is
 * waited for, not taken for none, and only the test's timeout ends a wait
 * for what never comes. A test about a bound sets its own.
 */
export const NO_BOUND_MS = 600_000;

/**
 * Calls `check` until it returns something other than undefined, pausing
 * `intervalMs` between calls. For states that change with nothing to wait
 * on (a Redis connection seen dropped). It waits as long as the state takes
 * by default: a loaded machine makes a reload or a reconnection take longer
 * than any bound chosen here, and the test's own timeout ends a wait for
 * what never comes. `timeoutMs` is for a test about how long something
 * takes, which should say so.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  what: string,
  timeoutMs = Infinity,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
