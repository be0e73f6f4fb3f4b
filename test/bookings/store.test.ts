/**
 * @module test/bookings/store
 * The in-memory booking store: ownership on every read and write, fresh ids,
 * idempotent cancelling and stored bookings that callers cannot change.
 */
import assert from 'node:assert/strict';
import { createMemoryBookingStore, type Booking } from '../../src/bookings';

const ITEM = 'b1240207-0df8-456d-9ee3-752904b6062b';
const draft = (user: string) => ({ itemId: ITEM, user, start: '2026-08-01', length: 2 });

const seeded: Booking = {
  id: 'b0db9db1-e959-46d6-b29b-0696485cc76a',
  itemId: ITEM,
  user: 'alice',
  status: 'confirmed',
  start: '2026-06-12',
  length: 3,
  createdAt: '2026-01-15T09:30:00.000Z',
};

describe('bookings/store (memory)', () => {
  it('gives a booking to its owner only', async () => {
    const store = createMemoryBookingStore({ bookings: [seeded] });
    assert.deepEqual(await store.get('alice', seeded.id), seeded);
    assert.equal(await store.get('bob', seeded.id), undefined);
    assert.equal(await store.get('ALICE', seeded.id), undefined);
    assert.deepEqual(await store.list('bob'), []);
  });

  it('finds an id spelled in upper case', async () => {
    const store = createMemoryBookingStore({ bookings: [seeded] });
    assert.equal((await store.get('alice', seeded.id.toUpperCase()))?.id, seeded.id);
  });

  it('lists a user’s bookings oldest first', async () => {
    const store = createMemoryBookingStore({ bookings: [seeded] });
    const a = await store.create(draft('alice'));
    await store.create(draft('bob'));
    const b = await store.create(draft('alice'));
    assert.deepEqual((await store.list('alice')).map((x) => x.id), [seeded.id, a.id, b.id]);
  });

  it('creates confirmed bookings with the clock’s time', async () => {
    const store = createMemoryBookingStore({ now: () => new Date('2026-03-01T10:00:00Z') });
    const made = await store.create(draft('carol'));
    assert.deepEqual({ ...made, id: 'x' }, { ...draft('carol'), id: 'x', status: 'confirmed', createdAt: '2026-03-01T10:00:00.000Z' });
  });

  it('draws another id when the generator returns one that is taken', async () => {
    const ids = [seeded.id, seeded.id, '11111111-1111-4111-8111-111111111111'];
    const store = createMemoryBookingStore({ bookings: [seeded], newId: () => ids.shift()! });
    const made = await store.create(draft('bob'));
    assert.equal(made.id, '11111111-1111-4111-8111-111111111111');
    assert.equal((await store.get('alice', seeded.id))?.user, 'alice');
  });

  it('fails rather than overwrite when the generator keeps returning taken ids', async () => {
    const store = createMemoryBookingStore({ bookings: [seeded], newId: () => seeded.id });
    await assert.rejects(store.create(draft('bob')), /ids that are taken/);
    assert.deepEqual(await store.get('alice', seeded.id), seeded);
    assert.deepEqual(await store.list('bob'), []);
  });

  it('keeps every one of many concurrent creates', async () => {
    const store = createMemoryBookingStore();
    const made = await Promise.all(Array.from({ length: 500 }, () => store.create(draft('dave'))));
    assert.equal(new Set(made.map((b) => b.id)).size, 500);
    assert.equal((await store.list('dave')).length, 500);
  });

  it('cancels once, and then returns the cancelled booking unchanged', async () => {
    let clock = Date.parse('2026-04-01T00:00:00Z');
    const store = createMemoryBookingStore({ bookings: [seeded], now: () => new Date((clock += 1000)) });
    const first = await store.cancel('alice', seeded.id);
    assert.equal(first?.status, 'cancelled');
    assert.equal(first?.cancelledAt, '2026-04-01T00:00:01.000Z');
    const second = await store.cancel('alice', seeded.id);
    assert.deepEqual(second, first);
    assert.deepEqual(await store.get('alice', seeded.id), first);
  });

  it('cancels nothing for anybody but the owner', async () => {
    const store = createMemoryBookingStore({ bookings: [seeded] });
    assert.equal(await store.cancel('bob', seeded.id), undefined);
    assert.equal((await store.get('alice', seeded.id))?.status, 'confirmed');
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
    assert.throws(() => createMemoryBookingStore({ bookings: [seeded, { ...seeded, user: 'bob' }] }), /two bookings have the id/);
  });
});
