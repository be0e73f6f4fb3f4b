/**
 * @module test/support/started-in-hooks
 * A resource a describe block shares: started in its `before` hook,
 * stopped in its `after` hook, and read through an accessor that says so
 * when a test reaches it before the hook has run.
 */

/**
 * Registers `start` as the calling block's `before` hook and `stop` as its
 * `after` hook (given what was started), and returns the started resource's
 * accessor; `what` names it in the error of a read before `before` has run.
 */
export function startedInHooks<T>(what: string, start: () => Promise<T>, stop: (started: T) => Promise<void>): () => T {
  let resource: T | undefined;
  before(async () => {
    resource = await start();
  });
  after(async () => {
    if (resource !== undefined) await stop(resource);
  });
  return () => {
    if (resource === undefined) throw new Error(`${what} starts in the before hook`);
    return resource;
  };
}
