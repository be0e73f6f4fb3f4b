/**
 * @module test/support/root-hooks
 * What the files of a worker share: the PGlite template (./pglite), made
 * before a file's first test, since making it takes longer than a test may
 * (once: later files and runs find it made); the PostgreSQL cluster
 * (./postgres), started on first use; both released once the file ends, as
 * mocha runs root hooks once a file in parallel mode. Loaded by .mocharc.json.
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
