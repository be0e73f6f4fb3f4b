/**
 * @module test/bookings/database/pglite-thread
 * The embedded database on a thread of its own: the event loop turns while
 * a statement runs, Postgres's errors keep their code and fields across the
 * thread, a transaction that throws leaves nothing behind, and a thread
 * that stops fails what it ran as an outage while the next call runs on a
 * thread started in its place. Another thread shares the database through
 * a port, its transactions taking turns with the first thread's.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { join } from 'node:path';
import workerThreads from 'node:worker_threads';
import { DatabaseUnavailableError } from '../../../src/bookings';
import { openPgliteEngine } from '../../../src/bookings/database/pglite';
import { sessionTurns, type Caller } from '../../../src/bookings/database/pglite-thread';
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

  it('shares its database with another thread through a port: each sees what the other committed, and a transaction sees only its own', async () => {
    const engine = await openPgliteEngine({ folder: await freshDataDir() });
    const port = await engine.connectPort();
    const other = new workerThreads.Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       require('tsx/cjs');
       const { pgliteEngineOverPort } = require(workerData.module);
       const engine = pgliteEngineOverPort(workerData.port, 'shared');
       parentPort.once('message', async () => {
         try {
           const rows = await engine.session((sql) => sql.transaction(async (tx) => {
             await tx.query('INSERT INTO t VALUES (2)');
             return tx.query('SELECT n FROM t ORDER BY n');
           }), 30000);
           parentPort.postMessage({ rows });
         } catch (err) {
           parentPort.postMessage({ error: String(err) });
         }
         await engine.close();
       });`,
      {
        eval: true,
        workerData: { module: join(__dirname, '../../../src/bookings/database/pglite.ts'), port },
        transferList: [port],
      },
    );
    try {
      await engine.session((sql) => sql.query('CREATE TABLE t (n int PRIMARY KEY)'), 30_000);
      const answered = once(other, 'message');
      const mine = engine.session(
        (sql) =>
          sql.transaction(async (tx) => {
            await tx.query('INSERT INTO t VALUES (1)');
            // The other thread asks while this transaction is open: had its statements come in, this one would see its row.
            other.postMessage('go');
            await new Promise((resolve) => setTimeout(resolve, 50));
            return tx.query('SELECT n FROM t ORDER BY n');
          }),
        30_000,
      );
      assert.deepEqual(await mine, [{ n: 1 }]);
      const [theirs] = (await answered) as [{ rows?: unknown; error?: string }];
      assert.deepEqual(theirs, { rows: [{ n: 1 }, { n: 2 }] });
      assert.deepEqual(await engine.session((sql) => sql.query('SELECT n FROM t ORDER BY n'), 10_000), [
        { n: 1 },
        { n: 2 },
      ]);
    } finally {
      await other.terminate();
      await engine.close();
    }
  });
});

describe('bookings/database/pglite-thread: the turns of sessions', () => {
  const caller = () => ({}) as Caller;
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it('gives the connection to one session at a time, in the order they asked, whichever thread asks', async () => {
    const turns = sessionTurns();
    const [a, b] = [caller(), caller()];
    const order: string[] = [];
    const first = turns.begin(a, 1).then(() => order.push('a1'));
    const second = turns.begin(b, 1).then(() => order.push('b1'));
    const third = turns.begin(a, 2).then(() => order.push('a2'));
    await first;
    await tick();
    assert.deepEqual(order, ['a1']);
    assert.equal(turns.holds(a, 1), true);
    assert.equal(turns.holds(b, 1), false, 'a session of another thread with the same number does not hold it');
    turns.end(b, 1);
    await tick();
    assert.deepEqual(order, ['a1'], 'a session that does not hold the connection cannot end the turn of one that does');
    turns.end(a, 1);
    await second;
    turns.end(b, 1);
    await third;
    assert.deepEqual(order, ['a1', 'b1', 'a2']);
  });

  it('gives up the turn and the places of a thread that is gone', async () => {
    const turns = sessionTurns();
    const [a, b] = [caller(), caller()];
    await turns.begin(a, 1);
    let bHolds = false;
    void turns.begin(a, 2);
    const next = turns.begin(b, 1).then(() => (bHolds = true));
    turns.leave(a);
    await next;
    assert.equal(bHolds, true);
    turns.end(b, 1);
    assert.equal(turns.holds(a, 2), false, "the gone thread's waiting session never gets the connection");
  });
});
