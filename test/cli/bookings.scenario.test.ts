/**
 * @module test/cli/bookings
 * Bookings kept by `gatehouse start` and `gatehouse serve` as a user runs
 * them: a 201 survives the process being killed (PGlite and PostgreSQL), the
 * demo bookings are inserted once, one data folder serves one process, two
 * gateways on one PostgreSQL see one set of bookings, and a DATABASE_URL
 * that cannot be read stops the start without showing its password.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import request from 'supertest';
import { DEMO } from '../support/bookings';
import { ALICE, basic } from '../support/credentials';
import { freshDataDir } from '../support/pglite';
import { PG_PASSWORD, sharedPostgres } from '../support/postgres';
import { killAll, runCli, startCli, type CliServer } from '../support/process';

const BOB = basic('bob', 'builder');
const SERVE_ENV = { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'warn' };
const HOTEL = { hotel_id: DEMO.hotels.harbourOslo, check_in: '2099-12-20', nights: 2 };

/** `gatehouse start` on free ports, bookings where `env` says. */
const start = (env: Record<string, string>) => startCli(['start', '--no-watch'], { env: { ...SERVE_ENV, ...env } });

async function killHard(server: CliServer): Promise<void> {
  const exited = once(server.child, 'exit');
  server.child.kill('SIGKILL');
  await exited;
}

describe('gatehouse bookings across processes', function () {
  afterEach(killAll);

  it('PGlite: keeps a booking answered 201 through a SIGKILL, inserts the demo bookings once, and refuses a second process on the folder', async () => {
    const data = await freshDataDir();
    const first = await start({ GATEHOUSE_DATA: data });
    const made = await request(first.address)
      .post('/v1/hotels/bookings/')
      .set('Authorization', ALICE)
      .send(HOTEL)
      .expect(201);
    const cancelled = await request(first.address)
      .delete(`/v1/hotels/bookings/${DEMO.alice.hotel}`)
      .set('Authorization', ALICE)
      .expect(200);
    await killHard(first);

    const again = await start({ GATEHOUSE_DATA: data });
    const read = await request(again.address)
      .get(`/v1/hotels/bookings/${made.body.id}`)
      .set('Authorization', ALICE)
      .expect(200);
    assert.deepEqual({ ...read.body, url: undefined }, { ...made.body, url: undefined });
    // Seeded once: the demo booking cancelled before the kill is not made anew.
    const seeded = await request(again.address)
      .get(`/v1/hotels/bookings/${DEMO.alice.hotel}`)
      .set('Authorization', ALICE)
      .expect(200);
    assert.equal(seeded.body.status, 'cancelled');
    assert.equal(seeded.body.cancelled_at, cancelled.body.cancelled_at);

    const second = await runCli(['start', '--no-watch'], { env: { ...SERVE_ENV, GATEHOUSE_DATA: data } });
    assert.equal(second.code, 1);
    assert.equal(
      second.stderr,
      `gatehouse: the data folder ${data} is in use by another process (pid ${again.child.pid}): one process a data folder; stop it, give this one another folder (--data, GATEHOUSE_DATA), or let several processes share bookings through PostgreSQL (--database-url, DATABASE_URL)\n`,
    );
    // The refused process did no harm: the first still serves.
    await request(again.address).get(`/v1/hotels/bookings/${made.body.id}`).set('Authorization', ALICE).expect(200);
  });

  it('PostgreSQL: two gateways started at once share one set of bookings, and a 201 survives a SIGKILL', async () => {
    const pg = await sharedPostgres();
    const url = await pg.createDatabase('two_gateways');
    const [a, b] = await Promise.all([start({ DATABASE_URL: url }), start({ DATABASE_URL: url })]);
    assert.match(a.line, /; bookings: PostgreSQL at postgres:\/\/gatehouse@127\.0\.0\.1:\d+\/two_gateways_\d+\)$/);
    assert.doesNotMatch(a.line, new RegExp(PG_PASSWORD));
    const database = new URL(url).pathname.slice(1);
    assert.deepEqual(await pg.query(database, 'SELECT version FROM gatehouse.schema_migrations ORDER BY version'), [
      { version: 1 },
    ]);

    const made = await request(a.address)
      .post('/v1/cars/bookings/')
      .set('Authorization', BOB)
      .send({ car_id: DEMO.cars.fiatVenice, pick_up: '2099-01-02' })
      .expect(201);
    const read = await request(b.address)
      .get(`/v1/cars/bookings/${made.body.id}`)
      .set('Authorization', BOB)
      .expect(200);
    assert.equal(read.body.car_id, DEMO.cars.fiatVenice);
    const listed = await request(b.address).get('/v1/cars/bookings/').set('Authorization', BOB).expect(200);
    assert.deepEqual(
      listed.body.items.map((x: { id: string }) => x.id),
      [DEMO.bob.car, made.body.id],
    );
    await request(b.address).get(`/v1/cars/bookings/${made.body.id}`).set('Authorization', ALICE).expect(404);
    const cancelled = await request(b.address)
      .delete(`/v1/cars/bookings/${made.body.id}`)
      .set('Authorization', BOB)
      .expect(200);
    assert.equal(
      (await request(a.address).get(`/v1/cars/bookings/${made.body.id}`).set('Authorization', BOB).expect(200)).body
        .status,
      'cancelled',
    );
    // Seeded once, by whichever came first.
    assert.deepEqual(
      await pg.query(database, 'SELECT count(*)::int AS n FROM gatehouse.bookings WHERE id = $1', [DEMO.bob.car]),
      [{ n: 1 }],
    );

    const kept = await request(a.address)
      .post('/v1/hotels/bookings/')
      .set('Authorization', ALICE)
      .send(HOTEL)
      .expect(201);
    await killHard(a);
    const c = await start({ DATABASE_URL: url });
    await request(c.address).get(`/v1/hotels/bookings/${kept.body.id}`).set('Authorization', ALICE).expect(200);
    assert.equal(
      (await request(c.address).get(`/v1/cars/bookings/${made.body.id}`).set('Authorization', BOB).expect(200)).body
        .cancelled_at,
      cancelled.body.cancelled_at,
    );
  });

  it('gatehouse serve hotel-booking keeps its bookings in its data folder across a restart', async () => {
    const data = await freshDataDir();
    const serve = () => startCli(['serve', 'hotel-booking', '--data', data], { env: SERVE_ENV });
    const first = await serve();
    assert.match(first.line, new RegExp(`; bookings: PGlite in ${data}\\)$`));
    const made = await request(first.address)
      .post('/v1/hotels/bookings/')
      .set('X-Travel-User', 'carol')
      .send(HOTEL)
      .expect(201);
    // Its database calls are in its own metrics, as under gatehouse start.
    const metrics = await request(first.address).get('/gateway/v0/metrics').expect(200);
    assert.match(metrics.text, /^gatehouse_database_call_duration_seconds_count\{operation="create"\} 1$/m);
    assert.match(metrics.text, /^gatehouse_process_cpu_seconds_total /m);
    await request(first.address).post('/gateway/v0/metrics').expect(405);
    const stopped = await first.stop();
    assert.deepEqual({ code: stopped.code, signal: stopped.signal }, { code: 0, signal: null }, stopped.stderr);
    const again = await serve();
    await request(again.address).get(`/v1/hotels/bookings/${made.body.id}`).set('X-Travel-User', 'carol').expect(200);
  });

  it('refuses --data and --database-url for a module that keeps no bookings', async () => {
    const res = await runCli(['serve', 'auth', '--data', '/tmp/x']);
    assert.equal(res.code, 2);
    assert.match(res.stderr, /^gatehouse: --data is for hotel-booking and car-booking only: auth keeps no bookings\n/);
  });

  it('refuses a database timeout that is not a whole number of milliseconds, or one given to a module that keeps no bookings', async () => {
    for (const [args, env, code, said] of [
      [
        ['serve', 'hotel-booking', '--database-timeout-ms', '0'],
        {},
        2,
        '--database-timeout-ms: must be an integer of 1 or more (milliseconds) (got "0")',
      ],
      [
        ['serve', 'auth', '--database-timeout-ms', '100'],
        {},
        2,
        '--database-timeout-ms is for hotel-booking and car-booking only: auth keeps no bookings',
      ],
      [
        ['serve', 'car-booking'],
        { DATABASE_TIMEOUT_MS: '5s' },
        1,
        'DATABASE_TIMEOUT_MS: must be an integer of 1 or more (milliseconds) (got "5s")',
      ],
      [
        ['start', '--no-watch'],
        { DATABASE_TIMEOUT_MS: '0' },
        1,
        'DATABASE_TIMEOUT_MS: must be an integer of 1 or more (milliseconds) (got "0")',
      ],
    ] as const) {
      const res = await runCli([...args], { env: { ...SERVE_ENV, ...env } });
      assert.equal(res.code, code, `${args.join(' ')}: ${res.stderr}`);
      assert.ok(res.stderr.startsWith(`gatehouse: ${said}`), res.stderr);
    }
  });

  it('stops the start at a DATABASE_URL it cannot read, naming the variable and never the password', async () => {
    const must = 'must be a postgres:// or postgresql:// URL (postgres://user:password@host:5432/database)';
    for (const [env, args, code, named] of [
      [{ DATABASE_URL: 'mysql://root:pw-secret-1@db/x' }, [], 1, `DATABASE_URL: ${must} (got the scheme mysql://)`],
      [
        {},
        ['--database-url', 'postgres://root:pw-secret-1@[db/x'],
        2,
        `--database-url: ${must} (got a URL that cannot be read; a password with @, : or / is written percent-encoded)`,
      ],
    ] as const) {
      const res = await runCli(['start', '--no-watch', ...args], { env: { ...SERVE_ENV, ...env } });
      assert.equal(res.code, code, res.stderr);
      assert.ok(res.stderr.startsWith(`gatehouse: ${named}`), res.stderr);
      assert.doesNotMatch(res.stderr + res.stdout, /pw-secret-1/);
    }
  });
});
