/**
 * @module test/support/root-hooks
 * What the whole run shares: the PGlite template (./pglite), made before the
 * first test, since making it takes longer than a test may; the PostgreSQL
 * cluster (./postgres), started on first use; both released once the run
 * ends. Loaded by .mocharc.json.
 */
import { pgliteTemplate, removeDataDirs } from './pglite';
import { stopSharedPostgres } from './postgres';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    this.timeout(300_000);
    await pgliteTemplate();
  },
  async afterAll(this: Mocha.Context): Promise<void> {
    await Promise.all([stopSharedPostgres(), removeDataDirs()]);
  },
};
