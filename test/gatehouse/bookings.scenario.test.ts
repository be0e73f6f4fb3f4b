/**
 * @module test/gatehouse/bookings
 * A whole Gatehouse keeping its bookings in PGlite and in PostgreSQL: 500
 * creates at once through the gateway are 500 rows under 500 ids, a cancel
 * racing a cancel is one cancellation, an Idempotency-Key retried through
 * the gateway returns the first booking, and check_ready and the metrics
 * see the database.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { DEMO } from '../support/bookings';
import { freshDataDir } from '../support/pglite';
import { sharedPostgres, type PostgresCluster } from '../support/postgres';
import { ALICE, basic } from '../support/credentials';
import { copyConfig, type TempConfig } from '../support/config-folder';
import { startGatehouse, type Running } from '../support/gatehouse';

const HOTEL = { hotel_id: DEMO.hotels.harbourOslo, check_in: '2099-12-20', nights: 2 };

/** The demo's limits without the per-user one, which 500 creates of one user would pass. */
const LIMITS =
  'domain: gateway\ndescriptors:\n  - key: x-gateway-test-allow\n    rate_limit: {unit: minute, requests_per_unit: 3}\n';

const ENGINES: {
  name: string;
  options(pg: () => Promise<PostgresCluster>): Promise<{ dataDir?: string; databaseUrl?: string }>;
}[] = [
  { name: 'PGlite', options: async () => ({ dataDir: await freshDataDir() }) },
  { name: 'PostgreSQL', options: async (pg) => ({ databaseUrl: await (await pg()).createDatabase('gateway') }) },
];

for (const engine of ENGINES) {
  describe(`gatehouse bookings in ${engine.name}`, function () {
    let config: TempConfig;
    let running: Running;
    let databaseUrl: string | undefined;
    const api = () => request(running.url);

    before(async () => {
      config = copyConfig();
      config.write('ratelimit.yaml', LIMITS);
      const options = await engine.options(sharedPostgres);
      databaseUrl = options.databaseUrl;
      // A database call may take as long as it takes: these tests are about what is kept, and on a
      // loaded machine 500 concurrent creates outlast the default bound (5 s, then 503).
      running = await startGatehouse({ configDir: config.dir, databaseTimeoutMs: 600_000, ...options });
    });
    after(async () => {
      await running?.stop();
      config?.remove();
    });

    it('is ready, and says where the bookings are', async () => {
      await api().get('/gateway/v0/check_ready').expect(200);
      assert.equal(running.gatehouse.bookingDatabase?.engine, engine.name);
    });

    it('keeps every one of 500 concurrent creates through the gateway: 500 rows, 500 ids', async () => {
      const user = basic('alice', 'wonderland');
      // One verified request first: the credential is then cached, and 500 bcrypt checks at once are not the subject here.
      await api().get('/v1/hotels/bookings/').set('Authorization', user).expect(200);
      const before = (await api().get('/v1/hotels/bookings/?limit=1').set('Authorization', user).expect(200)).body
        .total as number;
      const made = await Promise.all(
        Array.from({ length: 500 }, () =>
          fetch(`${running.url}/v1/hotels/bookings/`, {
            method: 'POST',
            headers: { Authorization: user, 'Content-Type': 'application/json' },
            body: JSON.stringify(HOTEL),
          }).then(async (res) => ({ status: res.status, body: (await res.json()) as { id: string } })),
        ),
      );
      assert.deepEqual([...new Set(made.map((m) => m.status))], [201]);
      const ids = new Set(made.map((m) => m.body.id));
      assert.equal(ids.size, 500);
      const listed = await api().get('/v1/hotels/bookings/?limit=1').set('Authorization', user).expect(200);
      assert.equal(listed.body.total, before + 500);
      if (databaseUrl) {
        const pg = await sharedPostgres();
        const rows = await pg.query<{ id: string }>(
          new URL(databaseUrl).pathname.slice(1),
          "SELECT id::text FROM gatehouse.bookings WHERE owner = 'alice' AND kind = 'hotel'",
        );
        for (const id of ids)
          assert.ok(
            rows.some((r) => r.id === id),
            `${id} is in the table`,
          );
      }
    });

    it('makes one cancellation of two cancels racing through the gateway', async () => {
      const made = await api().post('/v1/hotels/bookings/').set('Authorization', ALICE).send(HOTEL).expect(201);
      const [a, b] = await Promise.all(
        [1, 2].map(() => api().delete(`/v1/hotels/bookings/${made.body.id}`).set('Authorization', ALICE).expect(200)),
      );
      assert.equal(a.body.status, 'cancelled');
      assert.equal(a.body.cancelled_at, b.body.cancelled_at);
    });

    it('answers a create retried with its Idempotency-Key with the first booking, and another request with that key 422', async () => {
      const post = (body: object, key = '"retry-1"') =>
        api().post('/v1/cars/bookings/').set('Authorization', ALICE).set('Idempotency-Key', key).send(body);
      const car = { car_id: DEMO.cars.volvoOslo, pick_up: '2099-03-01' };
      const first = await post(car).expect(201);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      // The quoted and the bare spelling name one key.
      const again = await post(car, 'retry-1').expect(201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.headers.location, first.headers.location);
      assert.deepEqual(again.body, first.body);
      const other = await post({ ...car, days: 3 }).expect(422);
      assert.deepEqual(other.body, {
        code: 422,
        message: '422: Unprocessable Entity',
        detail: 'this Idempotency-Key was used for another booking request: send a new key for a new request',
      });
      const mine = await api().get('/v1/cars/bookings/?pick_up=2099-03-01').set('Authorization', ALICE).expect(200);
      assert.equal(mine.body.total, 1);
    });

    it('counts its database calls in the metrics', async () => {
      const text = (await api().get('/gateway/v0/metrics').expect(200)).text;
      assert.match(text, /gatehouse_database_call_duration_seconds_count\{operation="create"\} [1-9]\d*/);
      assert.match(text, /gatehouse_database_call_duration_seconds_count\{operation="migrate"\} 1\n/);
      assert.doesNotMatch(text, /gatehouse_database_errors_total\{/);
    });
  });
}
