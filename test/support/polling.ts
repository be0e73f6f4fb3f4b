/**
 * @module test/support/polling
 * Waiting for a state that changes with no event to wait on.
 */

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
