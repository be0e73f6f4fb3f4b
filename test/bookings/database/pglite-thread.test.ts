/**
 * @module test/bookings/database/pglite-thread
 * The embedded database on a thread of its own: the event loop turns while
 * a statement runs, Postgres's errors keep their code and fields across the
 * thread, a transaction that throws leaves nothing behind, and a thread
 * that stops fails what it ran as an outage while the next call runs on a
 * thread started in its place.
 */
import assert from 'node:assert/strict';
import workerThreads from 'node:worker_threads';
import { DatabaseUnavailableError } from '../../../src/bookings';
import { openPgliteEngine } from '../../../src/bookings/database/pglite';
import { freshDataDir } from '../../support/pglite';
import { NO_BOUND_MS } from '../../support/polling';

// Each call waits for the thread as long as the test lets it: a thread started anew loads
// Postgres's WebAssembly, which a loaded machine may make take longer than any bound chosen here.
describe('bookings/database/pglite: its thread', function () {
  it('runs a statement on its own thread: the event loop turns while the statement runs', async () => {
    const engine = await openPgliteEngine({ folder: await freshDataDir() });
    try {
      let turns = 0;
      const counting = setInterval(() => turns++, 5);
      try {
        await engine.session((sql) => sql.query('SELECT pg_sleep(0.3)'), NO_BOUND_MS);
      } finally {
        clearInterval(counting);
      }
      assert.ok(turns > 0, 'no timer ran while Postgres slept');
    } finally {
      await engine.close();
    }
  });

  it("hands Postgres's errors over with their code and fields, and rolls back a transaction whose work throws", async () => {
    const engine = await openPgliteEngine({ folder: await freshDataDir() });
    try {
      await engine.session((sql) => sql.query('CREATE TABLE t (n int PRIMARY KEY)'), NO_BOUND_MS);
      await engine.session((sql) => sql.query('INSERT INTO t VALUES (1)'), NO_BOUND_MS);
      await assert.rejects(
        engine.session((sql) => sql.query('INSERT INTO t VALUES ($1)', [1]), NO_BOUND_MS),
        (err: Error & { code?: string; constraint?: string }) =>
          err.code === '23505' && err.constraint === 't_pkey' && /duplicate key/.test(err.message),
      );
      await assert.rejects(
        engine.session(
          (sql) =>
            sql.transaction(async (tx) => {
              await tx.query('INSERT INTO t VALUES (2)');
              throw new Error('changed its mind');
            }),
          NO_BOUND_MS,
        ),
        /changed its mind/,
      );
      await assert.rejects(
        engine.session((sql) => sql.transaction((tx) => tx.transaction(async () => 1)), NO_BOUND_MS),
        /no nested transactions/,
      );
      assert.deepEqual(await engine.session((sql) => sql.query('SELECT n FROM t ORDER BY n'), NO_BOUND_MS), [{ n: 1 }]);
    } finally {
      await engine.close();
    }
  });

  it('fails what a thread that stopped was running as an outage, and runs the next call on a thread started in its place', async () => {
    const started: workerThreads.Worker[] = [];
    const Original = workerThreads.Worker;
    workerThreads.Worker = class extends Original {
      constructor(...args: ConstructorParameters<typeof Original>) {
        super(...args);
        started.push(this);
      }
    };
    let engine: Awaited<ReturnType<typeof openPgliteEngine>>;
    try {
      engine = await openPgliteEngine({ folder: await freshDataDir() });
    } finally {
      workerThreads.Worker = Original;
    }
    try {
      await engine.session((sql) => sql.query('CREATE TABLE t (n int)'), NO_BOUND_MS);
      assert.equal(started.length, 1);
      const running = engine.session((sql) => sql.query('SELECT pg_sleep(5)'), NO_BOUND_MS);
      await started[0].terminate();
      await assert.rejects(
        running,
        (err: unknown) =>
          err instanceof DatabaseUnavailableError && err.kind === 'unavailable' && /thread stopped/.test(err.reason),
      );
      await engine.session((sql) => sql.query('INSERT INTO t VALUES (1)'), NO_BOUND_MS);
      assert.deepEqual(await engine.session((sql) => sql.query('SELECT n FROM t'), NO_BOUND_MS), [{ n: 1 }]);
    } finally {
      await engine.close();
    }
  });
});
