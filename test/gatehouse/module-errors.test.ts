import assert from 'node:assert/strict';
import request from 'supertest';
import { createBookingModule, type BookingStore } from '../../src/bookings';
import { createServiceApp } from '../../src/http';
import { ALICE } from '../support/credentials';
import { copyConfig, type TempConfig } from '../support/config-folder';
import { startGatehouse, type Running } from '../support/gatehouse';

/** A store whose database is down: every call fails as a driver's would. */
const failingStore: BookingStore = {
  get: () => Promise.reject(new Error('database is down')),
  list: () => Promise.reject(new Error('database is down')),
  create: () => Promise.reject(new Error('database is down')),
  cancel: () => Promise.reject(new Error('database is down')),
};

/** The error line logged for the request `res` answered, once its access line is written (a turn after the answer). */
async function errorLineOf(running: Running, res: request.Response): Promise<Record<string, unknown> | undefined> {
  const id = res.headers['x-request-id'];
  await running.log.waitForLines(1, (l) => l.msg === 'request' && l.req_id === id);
  const lines = running.log.lines.filter((l) => l.msg === 'unexpected error' && l.req_id === id);
  assert.ok(lines.length <= 1, `one error line for request ${id}, not ${lines.length}`);
  return lines[0];
}

describe('gatehouse with a module that fails unexpectedly', function () {
  let config: TempConfig;
  let running: Running;

  before(async () => {
    config = copyConfig();
    config.write(
      'weather.yaml',
      'apiVersion: gateway/v1\nkind: Mapping\nname: weather-mapping\nprefix: /weather/\nservice: weather\nbypass_auth: true\n',
    );
    const weather = createServiceApp();
    weather.use(() => {
      throw new TypeError("Cannot read properties of undefined (reading 'forecast')");
    });
    running = await startGatehouse({
      configDir: config.dir,
      modules: [
        // The hotels over a store of the embedding app's own.
        createBookingModule({ kind: 'hotel', configDir: config.dir, store: failingStore }),
        { name: 'weather', app: weather },
      ],
    });
  });
  after(async () => {
    await running?.stop();
    config?.remove();
  });

  it('logs the error a built-in module answered with a 500, with the request id', async () => {
    const res = await request(running.url).get('/v1/hotels/bookings/').set('Authorization', ALICE).expect(500);
    assert.deepEqual(
      res.body,
      { code: 500, message: '500: Internal Server Error' },
      'the client is told nothing of the cause',
    );
    const line = await errorLineOf(running, res);
    assert.ok(line, 'an error line is logged');
    assert.equal(line.level, 50);
    assert.match(String((line.err as { stack?: string }).stack), /database is down/);
  });

  it("logs the error of an embedding app's module answered with a 500", async () => {
    const res = await request(running.url).get('/weather/oslo').expect(500);
    assert.equal(res.body.code, 500);
    const line = await errorLineOf(running, res);
    assert.ok(line, 'an error line is logged');
    assert.match(String((line.err as { message?: string }).message), /reading 'forecast'/);
  });

  it('logs nothing of the kind for an error the module explains to the client', async () => {
    const res = await request(running.url).get('/v1/messages/?limit=-1').expect(400);
    assert.equal(await errorLineOf(running, res), undefined);
  });
});
