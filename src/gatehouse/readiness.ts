/**
 * @module gatehouse/readiness
 * What `/gateway/v0/check_ready` asks besides a loaded config: that Redis,
 * when the rate limits are kept there, answers PING, and quickly.
 */

/** How long `/gateway/v0/check_ready` waits for Redis to answer PING. */
export const READY_PING_TIMEOUT_MS = 1000;

/** Resolves when `client` answers PING within `ms`; rejects with the reason otherwise. */
export function pingRedis(client: { ping(): Promise<string> }, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Redis did not answer PING within ${ms} ms`)), ms);
    client.ping().then(
      (reply) => {
        clearTimeout(timer);
        if (reply === 'PONG') resolve();
        else reject(new Error(`Redis answered PING with ${reply}`));
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(new Error(`Redis does not answer: ${(err as Error)?.message ?? String(err)}`));
      },
    );
  });
}
