/**
 * @module test/bookings/database/disk-full
 * The embedded database on a disk that fills up, behind a whole Gatehouse:
 * a booking that cannot be written is a 503 to retry, with the outage
 * logged once and no stack trace per request, nothing half made, and
 * bookings are written again, without a restart, once there is room. The
 * disk is a small tmpfs, which only root may mount: elsewhere the test is
 * skipped.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import request from 'supertest';
import { ALICE } from '../../support/credentials';
import { copyConfig, type TempConfig } from '../../support/config-folder';
import { eventually } from '../../support/polling';
import { startGatehouse, type Running } from '../../support/gatehouse';
import { DEMO } from '../../support/bookings';
import { mountSmallDisk, type SmallDisk } from '../../support/small-disk';

const HOTEL = { hotel_id: DEMO.hotels.harbourOslo, check_in: '2099-12-20', nights: 2 };

describe('bookings/database: the embedded database on a disk that fills up', function () {
  let disk: SmallDisk | undefined;
  let running: Running | undefined;
  let config: TempConfig | undefined;

  after(async () => {
    await running?.stop();
    config?.remove();
    disk?.unmount();
  });

  it('answers 503 to a booking it has no room to write, logs the outage once, and writes again once there is room', async function () {
    disk = mountSmallDisk(this, '96m');
    // The demo's 60 bookings a minute a user would refuse the bookings that fill the disk's last room.
    config = copyConfig();
    config.write(
      'ratelimit.yaml',
      config.read('ratelimit.yaml').replace('requests_per_unit: 60', 'requests_per_unit: 100000'),
    );
    running = await startGatehouse({ configDir: config.dir, dataDir: join(disk.dir, 'data') });
    const book = (key: string) =>
      request(running!.url)
        .post('/v1/hotels/bookings/')
        .set('Authorization', ALICE)
        .set('Idempotency-Key', key)
        .send(HOTEL);
    await book('before').expect(201);
    disk.fill();
    // What the database already holds of its files takes a few more; the disk has room for no more than that.
    let refused: request.Response | undefined;
    for (let i = 0; i < 1000 && refused === undefined; i++) {
      const res = await book(`full-${i}`);
      if (res.status !== 201) refused = res;
    }
    assert.ok(refused, 'a booking is refused once the disk is full');
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.body.detail, 'the booking database is unavailable: try again');
    const refusedKey = `full-again`;
    await book(refusedKey).expect(503);
    const lines = running.log.lines;
    assert.equal(
      lines.filter((l) => l.msg === 'the bookings database is unavailable: bookings answer 503 until it is back')
        .length,
      1,
    );
    assert.ok(!lines.some((l) => l.msg === 'unexpected error'), 'no stack trace for an outage');

    disk.freeBallast();
    const made = await eventually(async () => {
      const res = await book(refusedKey);
      return res.status === 201 ? res : undefined;
    }, 'a booking to be written again');
    // The key refused while the disk was full was not used up: it makes one booking, and replays it.
    const again = await book(refusedKey).expect(201);
    assert.equal(again.body.id, made.body.id);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(lines.filter((l) => l.msg === 'the bookings database answers again').length, 1);
  });
});
