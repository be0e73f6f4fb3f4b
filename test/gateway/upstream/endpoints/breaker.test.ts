import assert from 'node:assert/strict';
import { mapping } from '../../../support/records';
import { send, type Answer } from '../../../support/client';
import { testGateway, type TestGateway } from '../../../support/reporting-gateway';
import { testUpstream, type TestUpstream } from '../../../support/upstreams';

describe('circuit_breakers', () => {
  let up: TestUpstream;
  let rig: TestGateway;

  before(async () => {
    up = await testUpstream();
    const service = `http://${up.address}`;
    rig = await testGateway([
      mapping('/queue/', service, {
        name: 'queue',
        circuit_breakers: [{ max_connections: 1, max_pending_requests: 1 }],
      }),
      mapping('/requests/', service, { name: 'requests', circuit_breakers: [{ max_requests: 1 }] }),
      mapping('/no-retries/', service, {
        name: 'no-retries',
        circuit_breakers: [{ max_retries: 0 }],
        retry_policy: { retry_on: '5xx' },
      }),
      mapping('/low/', service, {
        name: 'low',
        circuit_breakers: [{ max_requests: 1 }, { priority: 'high', max_requests: 2 }],
      }),
      mapping('/high/', service, {
        name: 'high',
        priority: 'high',
        circuit_breakers: [{ max_requests: 1 }, { priority: 'high', max_requests: 2 }],
      }),
    ]);
  });

  beforeEach(() => {
    up.replies = [];
    up.got.length = 0;
  });

  afterEach(() => up.release());

  after(async () => {
    await rig.close();
    await up.close();
  });

  const overloaded = (res: Answer, limit: string) => {
    assert.equal(res.status, 503);
    assert.equal(res.headers['x-envoy-overloaded'], 'true');
    assert.deepEqual(res.json(), {
      code: 503,
      message: '503: Service Unavailable',
      detail: `the upstream service is overloaded: its circuit breaker is open (${limit})`,
    });
  };

  it('queues a request while every connection is busy, answers 503 past max_pending_requests, and closes again', async () => {
    up.fallback = 'hold';
    const first = send(rig.base, '/queue/1');
    await up.holding(1);
    // Of two more, one waits for the connection of the first; the other finds the queue full.
    const others = [send(rig.base, '/queue/2'), send(rig.base, '/queue/3')];
    overloaded(await Promise.race(others), 'max_pending_requests: 1');
    assert.equal(up.got.length, 1, 'the queued request has not reached the upstream');
    up.fallback = 200;
    up.release();
    assert.equal((await first).status, 200);
    assert.deepEqual((await Promise.all(others)).map((r) => r.status).sort(), [200, 503]);
    assert.equal((await send(rig.base, '/queue/4')).status, 200);
    assert.ok(
      rig.reported.overflows.includes(`cluster_${up.address.replace(/[.:]/g, '_')} max_pending_requests`),
      rig.reported.overflows.join(),
    );
  });

  it('answers 503 at once past max_requests in flight', async () => {
    up.fallback = 'hold';
    const first = send(rig.base, '/requests/1');
    await up.holding(1);
    overloaded(await send(rig.base, '/requests/2'), 'max_requests: 1');
    up.fallback = 200;
    up.release();
    assert.equal((await first).status, 200);
    assert.equal((await send(rig.base, '/requests/3')).status, 200);
  });

  it('makes no retry past max_retries, and answers with the try it has', async () => {
    up.replies = [503, 200];
    const res = await send(rig.base, '/no-retries/');
    assert.equal(res.status, 503);
    assert.equal(up.got.length, 1);
    assert.ok(rig.reported.overflows.some((o) => o.endsWith(' max_retries')));
  });

  it("counts a Mapping of priority high against the high thresholds, apart from the default's", async () => {
    up.fallback = 'hold';
    const low = send(rig.base, '/low/1');
    await up.holding(1);
    overloaded(await send(rig.base, '/low/2'), 'max_requests: 1');
    const high = [send(rig.base, '/high/1'), send(rig.base, '/high/2')];
    await up.holding(3);
    overloaded(await send(rig.base, '/high/3'), 'max_requests: 2');
    up.fallback = 200;
    up.release();
    assert.deepEqual(
      (await Promise.all([low, ...high])).map((r) => r.status),
      [200, 200, 200],
    );
  });
});
