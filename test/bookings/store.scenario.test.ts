/**
 * @module test/bookings/store
 * Every booking store keeps the same promises, in memory, in PGlite and in a
 * real PostgreSQL: ownership on every read and write, fresh ids, creation
 * order, creates that are never lost, a cancel that happens once, and an
 * Idempotency-Key that makes a retried create return the first booking.
 */
import assert from 'node:assert/strict';
import { HttpError } from '../../src/http';
import {
  createMemoryBookingStore,
  IdempotencyKeyReused,
  openBookingDatabase,
  type Booking,
  type BookingDatabase,
  type BookingStore,
} from '../../src/bookings';
import { freshDataDir } from '../support/pglite';
import { sharedPostgres } from '../support/postgres';

const ITEM = 'b1240207-0df8-456d-9ee3-752904b6062b';
const OTHER_ITEM = 'af14ed08-a000-4064-b436-ebb6b009dbc7';
const draft = (user: string, start = '2026-08-01') => ({ itemId: ITEM, user, start, length: 2 });

const seeded: Booking = {
  id: 'b0db9db1-e959-46d6-b29b-0696485cc76a',
  itemId: ITEM,
  user: 'alice',
  status: 'confirmed',
  start: '2026-06-12',
  length: 3,
  createdAt: '2026-01-15T09:30:00.000Z',
};

/** A clock the tests move: one second on at every reading. */
function steppingClock(from = '2026-03-01T10:00:00Z') {
  let t = Date.parse(from);
  return { now: () => new Date((t += 1000)), jump: (ms: number) => (t += ms) };
}

interface Subject {
  store: BookingStore;
  clock: ReturnType<typeof steppingClock>;
  close(): Promise<void>;
}

const KEY_TTL_MS = 60_000;

/**
 * A database call's bound, past any a test takes: these tests are about what
 * the stores keep, and on a loaded machine 500 concurrent creates outlast the
 * default bound (5 s, then 503); the test's own timeout ends a wait.
 */
const UNBOUNDED_MS = 600_000;

const SUBJECTS: { name: string; open(): Promise<Subject> }[] = [
  {
    name: 'memory',
    async open() {
      const clock = steppingClock();
      const store = createMemoryBookingStore({ bookings: [seeded], now: clock.now, idempotencyKeyTtlMs: KEY_TTL_MS });
      return { store, clock, close: async () => undefined };
    },
  },
  {
    name: 'PGlite',
    async open() {
      const clock = steppingClock();
      const db = await openBookingDatabase({
        dataDir: await freshDataDir(),
        seed: { hotel: [seeded] },
        now: clock.now,
        idempotencyKeyTtlMs: KEY_TTL_MS,
        timeoutMs: UNBOUNDED_MS,
      });
      return { store: db.store('hotel'), clock, close: () => db.close() };
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      const clock = steppingClock();
      const url = await (await sharedPostgres()).createDatabase('store');
      const db = await openBookingDatabase({
        databaseUrl: url,
        seed: { hotel: [seeded] },
        now: clock.now,
        idempotencyKeyTtlMs: KEY_TTL_MS,
        timeoutMs: UNBOUNDED_MS,
      });
      return { store: db.store('hotel'), clock, close: () => db.close() };
    },
  },
];

for (const subject of SUBJECTS) {
  describe(`bookings/store (${subject.name})`, () => {
    let s: Subject;
    before(async function () {
      s = await subject.open();
    });
    after(() => s?.close());

    it('gives a booking to its owner only', async () => {
      assert.deepEqual(await s.store.get('alice', seeded.id), seeded);
      assert.equal(await s.store.get('bob', seeded.id), undefined);
      assert.equal(await s.store.get('ALICE', seeded.id), undefined);
      assert.deepEqual(await s.store.list('nobody-yet'), []);
    });

    it('finds an id spelled in upper case, and nothing for an id that is no UUID', async () => {
      assert.equal((await s.store.get('alice', seeded.id.toUpperCase()))?.id, seeded.id);
      assert.equal(await s.store.get('alice', 'not-a-uuid'), undefined);
      assert.equal(await s.store.cancel('alice', "x' OR 1=1 --"), undefined);
    });

    it('lists a user’s bookings oldest first', async () => {
      const a = await s.store.create(draft('lister'));
      await s.store.create(draft('someone-else'));
      const b = await s.store.create(draft('lister'));
      assert.deepEqual(
        (await s.store.list('lister')).map((x) => x.id),
        [a.booking.id, b.booking.id],
      );
    });

    it('creates confirmed bookings with the clock’s time', async () => {
      const { booking, replayed } = await s.store.create(draft('carol'));
      assert.equal(replayed, false);
      assert.match(booking.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      assert.match(booking.createdAt, /^2026-03-01T10:00:\d\d\.000Z$/);
      assert.deepEqual(
        { ...booking, id: 'x', createdAt: 'y' },
        { ...draft('carol'), id: 'x', createdAt: 'y', status: 'confirmed' },
      );
      assert.deepEqual(await s.store.get('carol', booking.id), booking);
    });

    it('keeps every one of 500 concurrent creates, each under an id of its own', async function () {
      const made = await Promise.all(Array.from({ length: 500 }, () => s.store.create(draft('dave'))));
      assert.equal(new Set(made.map((m) => m.booking.id)).size, 500);
      const listed = await s.store.list('dave');
      assert.equal(listed.length, 500);
      assert.deepEqual(new Set(listed.map((b) => b.id)), new Set(made.map((m) => m.booking.id)));
    });

    it('cancels once, and then returns the cancelled booking unchanged', async () => {
      const { booking } = await s.store.create(draft('erin'));
      const first = await s.store.cancel('erin', booking.id);
      assert.equal(first?.status, 'cancelled');
      assert.match(first?.cancelledAt ?? '', /^2026-03-01T/);
      const second = await s.store.cancel('erin', booking.id);
      assert.deepEqual(second, first);
      assert.deepEqual(await s.store.get('erin', booking.id), first);
    });

    it('makes one cancellation of many concurrent cancels of one booking', async () => {
      const { booking } = await s.store.create(draft('frank'));
      const results = await Promise.all(Array.from({ length: 20 }, () => s.store.cancel('frank', booking.id)));
      assert.equal(
        new Set(results.map((r) => r?.cancelledAt)).size,
        1,
        'every cancel answers with the one cancellation',
      );
      assert.ok(results.every((r) => r?.status === 'cancelled'));
      assert.deepEqual(await s.store.get('frank', booking.id), results[0]);
    });

    it('cancels nothing for anybody but the owner', async () => {
      assert.equal(await s.store.cancel('bob', seeded.id), undefined);
      assert.equal((await s.store.get('alice', seeded.id))?.status, 'confirmed');
    });

    describe('with an Idempotency-Key', () => {
      it('answers a retried create with the first booking, and makes no second', async () => {
        const first = await s.store.create(draft('gina'), { idempotencyKey: 'k-1' });
        const again = await s.store.create(draft('gina'), { idempotencyKey: 'k-1' });
        assert.equal(first.replayed, false);
        assert.equal(again.replayed, true);
        assert.deepEqual(again.booking, first.booking);
        assert.equal((await s.store.list('gina')).length, 1);
      });

      it('refuses the key with another request, and changes nothing', async () => {
        const first = await s.store.create(draft('hank'), { idempotencyKey: 'k-2' });
        await assert.rejects(
          s.store.create({ ...draft('hank'), itemId: OTHER_ITEM }, { idempotencyKey: 'k-2' }),
          IdempotencyKeyReused,
        );
        await assert.rejects(
          s.store.create(draft('hank', '2026-08-02'), { idempotencyKey: 'k-2' }),
          IdempotencyKeyReused,
        );
        assert.deepEqual(await s.store.list('hank'), [first.booking]);
      });

      it('asks a new booking to be admitted, and answers a retry without asking: a check that now refuses leaves it standing', async () => {
        let asked = 0;
        const refuse = () => {
          asked++;
          throw new HttpError(400, 'check_in: must not be in the past');
        };
        await assert.rejects(s.store.create(draft('nora'), { idempotencyKey: 'k-late', admit: refuse }), HttpError);
        assert.deepEqual(await s.store.list('nora'), [], 'nothing made when refused');
        const first = await s.store.create(draft('nora'), { idempotencyKey: 'k-late', admit: () => asked++ });
        const again = await s.store.create(draft('nora'), { idempotencyKey: 'k-late', admit: refuse });
        assert.equal(asked, 2);
        assert.equal(again.replayed, true);
        assert.deepEqual(again.booking, first.booking);
        await assert.rejects(s.store.create(draft('nora'), { admit: refuse }), HttpError);
        assert.equal((await s.store.list('nora')).length, 1);
      });

      it('keeps keys per user: the same key of two users makes two bookings', async () => {
        const a = await s.store.create(draft('ivy'), { idempotencyKey: 'shared' });
        const b = await s.store.create(draft('jack'), { idempotencyKey: 'shared' });
        assert.notEqual(a.booking.id, b.booking.id);
        assert.equal(b.replayed, false);
        assert.equal(await s.store.get('jack', a.booking.id), undefined);
      });

      it('makes one booking of concurrent retries with one key', async () => {
        const made = await Promise.allSettled(
          Array.from({ length: 10 }, () => s.store.create(draft('kim'), { idempotencyKey: 'burst' })),
        );
        const ids = new Set(made.flatMap((m) => (m.status === 'fulfilled' ? [m.value.booking.id] : [])));
        assert.equal(ids.size, 1);
        assert.equal((await s.store.list('kim')).length, 1);
      });

      it('forgets a key once its time is past: a create with it then makes a new booking', async () => {
        const first = await s.store.create(draft('liam'), { idempotencyKey: 'k-old' });
        s.clock.jump(KEY_TTL_MS + 1000);
        const later = await s.store.create({ ...draft('liam'), itemId: OTHER_ITEM }, { idempotencyKey: 'k-old' });
        assert.equal(later.replayed, false);
        assert.notEqual(later.booking.id, first.booking.id);
        const again = await s.store.create({ ...draft('liam'), itemId: OTHER_ITEM }, { idempotencyKey: 'k-old' });
        assert.deepEqual(again.booking, later.booking);
      });
    });
  });
}

describe('bookings/store (memory only)', () => {
  it('draws another id when the generator returns one that is taken', async () => {
    const ids = [seeded.id, seeded.id, '11111111-1111-4111-8111-111111111111'];
    const store = createMemoryBookingStore({ bookings: [seeded], newId: () => ids.shift()! });
    const { booking } = await store.create(draft('bob'));
    assert.equal(booking.id, '11111111-1111-4111-8111-111111111111');
    assert.equal((await store.get('alice', seeded.id))?.user, 'alice');
  });

  it('fails rather than overwrite when the generator keeps returning taken ids', async () => {
    const store = createMemoryBookingStore({ bookings: [seeded], newId: () => seeded.id });
    await assert.rejects(store.create(draft('bob')), /ids that are taken/);
    assert.deepEqual(await store.get('alice', seeded.id), seeded);
    assert.deepEqual(await store.list('bob'), []);
  });

  it('hands out bookings that cannot be changed from outside', async () => {
    const store = createMemoryBookingStore({ bookings: [seeded] });
    const got = (await store.get('alice', seeded.id)) as { status: string };
    assert.throws(() => {
      got.status = 'cancelled';
    }, TypeError);
    assert.equal((await store.get('alice', seeded.id))?.status, 'confirmed');
  });

  it('refuses two seeded bookings with one id', () => {
    assert.throws(
      () => createMemoryBookingStore({ bookings: [seeded, { ...seeded, user: 'bob' }] }),
      /two bookings have the id/,
    );
  });
});

describe('bookings/store (PostgreSQL only)', () => {
  let db: BookingDatabase;
  after(() => db?.close());

  it('draws another id when the generator returns one that is taken, and fails rather than overwrite when it keeps doing so', async function () {
    const url = await (await sharedPostgres()).createDatabase('ids');
    const ids = [
      seeded.id,
      '11111111-1111-4111-8111-111111111111',
      seeded.id,
      seeded.id,
      seeded.id,
      seeded.id,
      seeded.id,
    ];
    db = await openBookingDatabase({
      databaseUrl: url,
      seed: { hotel: [seeded] },
      newId: () => ids.shift() ?? seeded.id,
    });
    const store = db.store('hotel');
    assert.equal((await store.create(draft('bob'))).booking.id, '11111111-1111-4111-8111-111111111111');
    await assert.rejects(store.create(draft('bob')), /ids that are taken/);
    assert.deepEqual(await store.get('alice', seeded.id), seeded);
    assert.equal((await store.list('bob')).length, 1);
  });
});
