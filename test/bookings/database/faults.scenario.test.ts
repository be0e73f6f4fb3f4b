/**
 * @module test/bookings/database/faults
 * A PostgreSQL that stops answering, refuses connections, is slow, or is not
 * there yet at start, behind a whole Gatehouse: bookings get a 503 with the
 * error body within the deadline and never hang, check_ready says why (and
 * never the password), the outage is logged once each way and counted, and
 * everything comes back by itself. An Idempotency-Key retried while its
 * first request is still being made is a 409.
 */
import assert from 'node:assert/strict';
import { Client } from 'pg';
import request from 'supertest';
import { ALICE } from '../../support/credentials';
import { DEMO_CONFIG } from '../../support/config-folder';
import { eventually } from '../../support/polling';
import { startGatehouse, type Running } from '../../support/gatehouse';
import { PG_PASSWORD, PG_USER, sharedPostgres, type PostgresCluster } from '../../support/postgres';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy';
import { DEMO } from '../../support/bookings';

const READY = '/gateway/v0/check_ready';
const TIMEOUT_MS = 1000;
const HOTEL = { hotel_id: DEMO.hotels.harbourOslo, check_in: '2099-12-20', nights: 2 };

/** Everything a running Gatehouse said, as text: where a password would show. */
const logText = (running: Running) => running.log.raw.join('\n');

describe('bookings/database: PostgreSQL faults, behind a whole Gatehouse', function () {
  let pg: PostgresCluster;
  let proxy: TcpProxy;
  let running: Running;
  let database: string;

  before(async () => {
    pg = await sharedPostgres();
    const url = await pg.createDatabase('faults');
    database = new URL(url).pathname.slice(1);
    proxy = await startTcpProxy(pg.port);
    running = await startGatehouse({
      configDir: DEMO_CONFIG,
      databaseUrl: `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${proxy.port}/${database}`,
      databaseTimeoutMs: TIMEOUT_MS,
    });
  });
  after(async () => {
    await running?.stop();
    await proxy?.close();
  });
  afterEach(() => proxy.restore());

  const list = () => request(running.url).get('/v1/hotels/bookings/').set('Authorization', ALICE);

  it('serves the seeded bookings and is ready while PostgreSQL answers', async () => {
    const res = await list().expect(200);
    assert.ok(res.body.items.some((b: { id: string }) => b.id === DEMO.alice.hotel));
    await request(running.url).get(READY).expect(200);
  });

  it('answers 503 within the deadline while PostgreSQL does not answer, says why in check_ready, and serves again once it does', async () => {
    proxy.hang();
    const res = await list().expect(503).expect('Retry-After', '1');
    assert.deepEqual(res.body, {
      code: 503,
      message: '503: Service Unavailable',
      detail: 'the booking database did not answer in time: try again',
    });
    const ready = await request(running.url).get(READY).expect(503);
    assert.match(
      ready.body.detail,
      /^not ready: PostgreSQL \(postgres:\/\/gatehouse@127\.0\.0\.1:\d+\/\w+\) is unavailable: /,
    );
    // Other routes do not need the database.
    await request(running.url).get('/v1/messages/1').expect(200);
    await proxy.restore();
    await eventually(async () => ((await list()).status === 200 ? true : undefined), 'bookings to be served again');
    await request(running.url).get(READY).expect(200);
    const metrics = (await request(running.url).get('/gateway/v0/metrics').expect(200)).text;
    assert.match(metrics, /gatehouse_database_errors_total\{operation="list",kind="timeout"\} [1-9]/);
    assert.match(metrics, /gatehouse_database_call_duration_seconds_count\{operation="list"\} [1-9]/);
  });

  it('answers 503 at once while PostgreSQL refuses connections, logs the outage once each way, and never shows the password', async () => {
    await proxy.refuse();
    for (let i = 0; i < 3; i++) {
      const res = await request(running.url)
        .post('/v1/hotels/bookings/')
        .set('Authorization', ALICE)
        .send(HOTEL)
        .expect(503);
      assert.equal(res.body.detail, 'the booking database is unavailable: try again');
    }
    const ready = await request(running.url).get(READY).expect(503);
    assert.match(ready.body.detail, /is unavailable: .*ECONNREFUSED/);
    assert.doesNotMatch(ready.text, new RegExp(PG_PASSWORD));
    await proxy.restore();
    await eventually(async () => ((await list()).status === 200 ? true : undefined), 'bookings to be served again');
    const lost = running.log.lines.filter(
      (l) => l.msg === 'the bookings database is unavailable: bookings answer 503 until it is back',
    );
    const back = running.log.lines.filter((l) => l.msg === 'the bookings database answers again');
    assert.ok(lost.length >= 1 && back.length >= 1);
    assert.equal(lost.length, back.length, 'each outage is told once, and its end once');
    assert.doesNotMatch(logText(running), new RegExp(PG_PASSWORD));
  });

  it('answers 503 within the deadline for a statement PostgreSQL is slow to finish (a table locked by another session)', async () => {
    const locker = new Client({ connectionString: pg.url(database) });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE gatehouse.bookings IN ACCESS EXCLUSIVE MODE');
      const res = await list().expect(503);
      assert.equal(res.body.code, 503);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    await list().expect(200);
  });

  it('answers 503 to a write PostgreSQL refuses as read-only (a standby, or a primary a failover demoted), serves reads, and writes again once it takes them', async () => {
    const readOnly = async (on: boolean) => {
      // From another database: a session of this one would be read-only too.
      await pg.query(
        'postgres',
        `ALTER DATABASE "${database}" SET default_transaction_read_only = ${on ? 'on' : 'off'}`,
      );
      // The setting holds for new sessions: the gateway's are ended, and it makes new ones.
      await pg.query('postgres', 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [
        database,
      ]);
      await eventually(async () => ((await list()).status === 200 ? true : undefined), 'bookings to be read again');
    };
    await readOnly(true);
    try {
      const res = await request(running.url)
        .post('/v1/hotels/bookings/')
        .set('Authorization', ALICE)
        .send(HOTEL)
        .expect(503)
        .expect('Retry-After', '1');
      assert.deepEqual(res.body, {
        code: 503,
        message: '503: Service Unavailable',
        detail: 'the booking database is unavailable: try again',
      });
      assert.ok(
        running.log.lines.some(
          (l) =>
            l.msg === 'the bookings database is unavailable: bookings answer 503 until it is back' &&
            /read-only/.test(String(l.err)),
        ),
        'the outage is logged with its reason',
      );
      assert.ok(!running.log.lines.some((l) => l.msg === 'unexpected error'), 'no stack trace for an outage');
    } finally {
      await readOnly(false);
    }
    await request(running.url).post('/v1/hotels/bookings/').set('Authorization', ALICE).send(HOTEL).expect(201);
  });

  it('answers a retry of an Idempotency-Key whose first request is still being made 409, then the first booking once it is made', async () => {
    const locker = new Client({ connectionString: pg.url(database) });
    await locker.connect();
    let first: Promise<request.Response> | undefined;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE gatehouse.bookings IN EXCLUSIVE MODE');
      first = request(running.url)
        .post('/v1/hotels/bookings/')
        .set('Authorization', ALICE)
        .set('Idempotency-Key', 'in-flight')
        .send(HOTEL)
        .then((r) => r);
      // The first holds its key (an advisory lock) and waits for the table.
      await eventually(async () => {
        const rows = await pg.query<{ n: number }>(
          database,
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted",
        );
        return rows[0].n > 0 ? true : undefined;
      }, 'the first request to hold its key');
      const retry = await request(running.url)
        .post('/v1/hotels/bookings/')
        .set('Authorization', ALICE)
        .set('Idempotency-Key', 'in-flight')
        .send(HOTEL)
        .expect(409);
      assert.equal(retry.headers['retry-after'], '1');
      assert.match(retry.body.detail, /still being made/);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    const made = await first;
    assert.equal(made.status, 201, made.text);
    const again = await request(running.url)
      .post('/v1/hotels/bookings/')
      .set('Authorization', ALICE)
      .set('Idempotency-Key', 'in-flight')
      .send(HOTEL)
      .expect(201);
    assert.equal(again.body.id, made.body.id);
    assert.equal(again.headers['idempotent-replayed'], 'true');
  });
});

describe('bookings/database: a Gatehouse started while PostgreSQL is down', function () {
  let proxy: TcpProxy;
  let running: Running;

  after(async () => {
    await running?.stop();
    await proxy?.close();
  });

  it('starts, serves what needs no database, answers bookings 503, and migrates and serves them once PostgreSQL is there', async () => {
    const pg = await sharedPostgres();
    const database = new URL(await pg.createDatabase('late')).pathname.slice(1);
    proxy = await startTcpProxy(pg.port);
    await proxy.refuse();
    running = await startGatehouse({
      configDir: DEMO_CONFIG,
      databaseUrl: `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${proxy.port}/${database}`,
      databaseTimeoutMs: TIMEOUT_MS,
    });
    await request(running.url).get('/v1/messages/1').expect(200);
    const res = await request(running.url)
      .get(`/v1/hotels/bookings/${DEMO.alice.hotel}`)
      .set('Authorization', ALICE)
      .expect(503);
    assert.equal(res.body.detail, 'the booking database is unavailable: try again');
    const ready = await request(running.url).get(READY).expect(503);
    assert.match(ready.body.detail, /^not ready: PostgreSQL \(.*\) is not ready: .*ECONNREFUSED/);
    await proxy.restore();
    const served = await eventually(async () => {
      const r = await request(running.url).get(`/v1/hotels/bookings/${DEMO.alice.hotel}`).set('Authorization', ALICE);
      return r.status === 200 ? r : undefined;
    }, 'the seeded booking to be served');
    assert.equal(served.body.user, 'alice');
    await request(running.url).get(READY).expect(200);
    assert.doesNotMatch(logText(running), new RegExp(PG_PASSWORD));
  });
});
