/**
 * @module test/bookings/data
 * The data file `bookings.yaml`: the demo data of config/, and how a broken
 * file is reported.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BookingDataError, loadBookingData, loadBookingDataSync, parseBookingData } from '../../src/bookings';
import { aliasBomb } from '../support/hostile-yaml';
import { DEMO_CONFIG } from '../support/config-folder';
import { DEMO } from '../support/bookings';

const HOTEL = 'b1240207-0df8-456d-9ee3-752904b6062b';
const hotels = `hotels:\n  - {id: ${HOTEL}, name: Aurora, city: Oslo, stars: 4}\n`;
const booking = (extra = '') =>
  `hotel_bookings:\n  - {id: b0db9db1-e959-46d6-b29b-0696485cc76a, user: alice, hotel_id: ${HOTEL}, check_in: 2026-06-12, nights: 3, created_at: "2026-01-15T09:30:00Z"${extra}}\n`;

/** The problems reported for a text, or a failure when it is accepted. */
function problemsOf(text: string): readonly string[] {
  try {
    parseBookingData(text, 'x/bookings.yaml');
  } catch (err) {
    assert.ok(err instanceof BookingDataError);
    assert.equal(err.file, 'x/bookings.yaml');
    assert.ok(err.message.startsWith('x/bookings.yaml: '), err.message);
    return err.problems;
  }
  assert.fail('the text was accepted');
}

describe('bookings/data', () => {
  describe('the demo data in config/', () => {
    it('loads, with the ids the README shows', async () => {
      const data = await loadBookingData(DEMO_CONFIG);
      assert.deepEqual(
        data.hotels.map((h) => h.id),
        Object.values(DEMO.hotels),
      );
      assert.deepEqual(
        data.cars.map((c) => c.id),
        Object.values(DEMO.cars),
      );
      const ids = [...data.hotel_bookings, ...data.car_bookings].map((b) => b.id);
      for (const id of [...Object.values(DEMO.alice), ...Object.values(DEMO.bob)]) assert.ok(ids.includes(id), id);
    });

    it('gives alice and bob each a confirmed hotel booking and a confirmed car booking', () => {
      const data = loadBookingDataSync(DEMO_CONFIG);
      for (const user of ['alice', 'bob']) {
        assert.ok(
          data.hotel_bookings.some((b) => b.user === user && b.status === 'confirmed'),
          user,
        );
        assert.ok(
          data.car_bookings.some((b) => b.user === user && b.status === 'confirmed'),
          user,
        );
      }
    });
  });

  describe('a valid file', () => {
    it('gives bookings their kind’s fields in the stored shape', () => {
      const data = parseBookingData(hotels + booking());
      assert.deepEqual(data.hotel_bookings, [
        {
          id: 'b0db9db1-e959-46d6-b29b-0696485cc76a',
          itemId: HOTEL,
          user: 'alice',
          status: 'confirmed',
          start: '2026-06-12',
          length: 3,
          createdAt: '2026-01-15T09:30:00.000Z',
        },
      ]);
      assert.deepEqual(data.cars, []);
    });

    it('reads an empty file as no data', () => {
      assert.deepEqual(parseBookingData(''), { hotels: [], cars: [], hotel_bookings: [], car_bookings: [] });
    });

    it('takes ids in upper case and stores them in lower case', () => {
      const data = parseBookingData(hotels.replace(HOTEL, HOTEL.toUpperCase()));
      assert.equal(data.hotels[0].id, HOTEL);
    });
  });

  describe('a broken file', () => {
    it('is reported with the path of a field of the wrong type', () => {
      assert.deepEqual(problemsOf(hotels.replace('stars: 4', 'stars: four')), ['hotels[0].stars: must be a number']);
    });

    it('is reported for an unknown field', () => {
      assert.deepEqual(problemsOf(hotels.replace('stars: 4', 'stars: 4, pool: true')), [
        'hotels[0].pool: unknown field',
      ]);
      assert.deepEqual(problemsOf(`${hotels}trains: []\n`), ['trains: unknown field']);
    });

    it('is reported for an id that is not a UUID', () => {
      assert.deepEqual(problemsOf(hotels.replace(HOTEL, 'aurora')), ['hotels[0].id: must be a UUID']);
    });

    it('is reported for a booking of an unknown item', () => {
      assert.deepEqual(problemsOf(booking()), [`hotel_bookings[0].hotel_id: no hotel in hotels has the id ${HOTEL}`]);
    });

    it('is reported for two entries with one id', () => {
      const twice = `${hotels}  - {id: ${HOTEL}, name: Again, city: Bergen, stars: 1}\n`;
      assert.deepEqual(problemsOf(twice), [`hotels[1].id: two hotels have the id ${HOTEL}`]);
      const bookings = hotels + booking() + booking().replace('hotel_bookings:\n', '');
      assert.deepEqual(problemsOf(bookings), [
        'hotel_bookings[1].id: two bookings have the id b0db9db1-e959-46d6-b29b-0696485cc76a',
      ]);
    });

    it('is reported for a bad date, status or cancellation', () => {
      assert.deepEqual(problemsOf(hotels + booking().replace('2026-06-12', '2026-13-01')), [
        'hotel_bookings[0].check_in: is not a day of the calendar',
      ]);
      assert.deepEqual(problemsOf(hotels + booking(', status: pending')), [
        'hotel_bookings[0].status: must be confirmed or cancelled',
      ]);
      assert.deepEqual(problemsOf(hotels + booking(', status: cancelled')), [
        'hotel_bookings[0].cancelled_at: is required when status is cancelled',
      ]);
      assert.deepEqual(problemsOf(hotels + booking(', cancelled_at: "2026-02-01T00:00:00Z"')), [
        'hotel_bookings[0].cancelled_at: is only allowed when status is cancelled',
      ]);
    });

    it('reports every problem at once', () => {
      const problems = problemsOf(`hotels:\n  - {id: nope, name: "", city: Oslo, stars: 9}\ncars: {}\n`);
      assert.equal(problems.length, 4, problems.join('\n'));
    });

    it('reads the data between document separators, as templating tools write them, and refuses a second document', () => {
      for (const text of [`${hotels}---\n`, `---\n${hotels}`, `---\n${hotels}---\n...\n`]) {
        assert.equal(parseBookingData(text).hotels[0].id, HOTEL);
      }
      assert.deepEqual(problemsOf(`${hotels}---\n${booking()}`), [
        'holds 2 YAML documents: write the data as one mapping',
      ]);
    });

    it('reports a tab in the indentation in one line, with the line', () => {
      assert.deepEqual(problemsOf(`hotels:\n\t- {id: ${HOTEL}, name: Aurora, city: Oslo, stars: 4}\n`), [
        'not valid YAML: Tabs are not allowed as indentation at line 2, column 1',
      ]);
    });

    it('is refused when it uses more than 100 aliases (an alias bomb), instead of throwing past the report', () => {
      assert.deepEqual(problemsOf(`${aliasBomb('extra')}${hotels}`), ['uses aliases more than 100 times: refused']);
    });

    it('is reported when it is not YAML or not a mapping', () => {
      assert.match(problemsOf('hotels: [\n')[0], /^not valid YAML: /);
      assert.deepEqual(problemsOf('- a\n- b\n'), [
        '(top level): the file must hold a mapping (hotels, cars, hotel_bookings, car_bookings)',
      ]);
    });
  });

  describe('reading from a config folder', () => {
    let dir: string;
    before(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-bookings-'));
    });
    after(() => rm(dir, { recursive: true, force: true }));

    it('names the file when it does not exist', async () => {
      const empty = path.join(dir, 'nothing-here');
      const file = path.join(empty, 'bookings.yaml');
      await assert.rejects(
        loadBookingData(empty),
        (err: Error) => err instanceof BookingDataError && err.message === `${file}: the file does not exist`,
      );
      assert.throws(() => loadBookingDataSync(empty), { message: `${file}: the file does not exist` });
    });

    it('refuses a file with no document, which is what a reload sees of a file being written over', async () => {
      const file = path.join(dir, 'bookings.yaml');
      const expected = `${file}: holds no YAML document (it is empty, or only comments): refused, since a file caught while it is being written would empty the catalogues; write \`hotels: []\` for no data`;
      for (const text of ['', '# The demo catalogue.\n', '---\n']) {
        await writeFile(file, text);
        await assert.rejects(loadBookingData(dir), { message: expected });
        assert.throws(() => loadBookingDataSync(dir), { message: expected });
      }
      await writeFile(file, 'hotels: []\n');
      assert.deepEqual((await loadBookingData(dir)).hotels, []);
    });

    it('refuses a file over the size limit, naming it', async () => {
      const file = path.join(dir, 'bookings.yaml');
      await writeFile(file, `${hotels}${'#'.repeat(200)}\n`);
      const expected = new RegExp(`^${file}: is larger than the file size limit of 128 bytes \\(\\d+ bytes\\)`);
      await assert.rejects(loadBookingData(dir, 128), { message: expected });
      assert.throws(() => loadBookingDataSync(dir, 128), { message: expected });
    });

    it('names the file and the field of a problem', async () => {
      await writeFile(path.join(dir, 'bookings.yaml'), hotels.replace('city: Oslo', 'city: 7'));
      const expected = `${path.join(dir, 'bookings.yaml')}: hotels[0].city: must be a string`;
      await assert.rejects(loadBookingData(dir), { message: expected });
      assert.throws(() => loadBookingDataSync(dir), { message: expected });
    });
  });
});
