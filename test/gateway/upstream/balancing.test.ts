import assert from 'node:assert/strict';
import { freePort } from '../../support/ports';
import { mapping } from '../../support/records';
import { send } from '../../support/client';
import { testClock } from '../../support/clock';
import { testGateway, type TestGateway } from '../../support/reporting-gateway';
import { testResolver } from '../../support/resolver';
import { testUpstream, type TestUpstream } from '../../support/upstreams';

/** Which upstream answered each of `n` requests to `path` (sent one after the other). */
async function servedBy(
  base: string,
  path: string,
  n: number,
  headers: Record<string, string> = {},
): Promise<string[]> {
  const hosts: string[] = [];
  for (let i = 0; i < n; i++)
    hosts.push(String((await send(base, path, { headers })).headers['x-served-by']).split(':')[0]);
  return hosts;
}

describe('several endpoints for one service', () => {
  let a: TestUpstream;
  let b: TestUpstream;
  let rig: TestGateway;
  const clock = testClock();
  const names: Record<string, string[]> = {};
  const resolve = testResolver(names);

  before(async () => {
    a = await testUpstream('127.0.0.1');
    b = await testUpstream('127.0.0.2', {}, a.port);
    Object.assign(names, {
      'quote.shop.svc.cluster.local': ['127.0.0.1', '127.0.0.2'],
      'moving.shop.svc.cluster.local': ['127.0.0.1'],
    });
    const both = [a.address, b.address];
    rig = await testGateway(
      [
        mapping('/rr/', `http://${a.address}`, { name: 'rr', endpoints: both }),
        mapping('/dns/', `quote.shop:${a.port}`, { name: 'dns' }),
        mapping('/logical/', `quote.shop:${a.port}`, { name: 'logical', dns_type: 'logical_dns' }),
        mapping('/moving/', `moving.shop:${a.port}`, { name: 'moving' }),
        mapping('/least/', `http://${a.address}`, {
          name: 'least',
          endpoints: both,
          load_balancer: { policy: 'least_request' },
        }),
        mapping('/header/', `http://${a.address}`, {
          name: 'header',
          endpoints: both,
          load_balancer: { policy: 'ring_hash', header: 'X-User' },
        }),
        mapping('/cookie/', `http://${a.address}`, {
          name: 'cookie',
          endpoints: both,
          load_balancer: { policy: 'maglev', cookie: { name: 'sticky', path: '/cookie', ttl: '60s' } },
        }),
        mapping('/source/', `http://${a.address}`, {
          name: 'source',
          endpoints: both,
          load_balancer: { policy: 'ring_hash', source_ip: true },
        }),
        mapping('/eject/', `http://${a.address}`, { name: 'eject', endpoints: both, cluster_tag: 'eject' }),
      ],
      { resolve, now: clock.now },
    );
  });

  afterEach(() => {
    for (const up of [a, b]) {
      up.release();
      up.fallback = 200;
      up.replies = [];
    }
  });

  after(async () => {
    await rig.close();
    await Promise.all([a.close(), b.close()]);
  });

  it('takes endpoints in turn (round_robin, the default), the service as Host to each', async () => {
    assert.deepEqual(await servedBy(rig.base, '/rr/', 4), ['127.0.0.1', '127.0.0.2', '127.0.0.1', '127.0.0.2']);
    assert.equal(b.got.at(-1)!.headers.host, a.address);
  });

  it('balances over every address a name resolves to (strict_dns), or the first only (logical_dns)', async () => {
    assert.deepEqual((await servedBy(rig.base, '/dns/', 4)).sort(), [
      '127.0.0.1',
      '127.0.0.1',
      '127.0.0.2',
      '127.0.0.2',
    ]);
    assert.deepEqual(await servedBy(rig.base, '/logical/', 3), ['127.0.0.1', '127.0.0.1', '127.0.0.1']);
  });

  it('looks a name up again once 5 s old, and keeps what it had while DNS fails', async () => {
    assert.deepEqual(await servedBy(rig.base, '/moving/', 1), ['127.0.0.1']);
    names['moving.shop.svc.cluster.local'] = ['127.0.0.2'];
    clock.advance(5000);
    // The stale answer serves while the name is looked up again.
    let served: string[];
    do served = await servedBy(rig.base, '/moving/', 1);
    while (served[0] !== '127.0.0.2');
    delete names['moving.shop.svc.cluster.local'];
    delete names['moving.shop'];
    clock.advance(5000);
    const lookups = resolve.lookups.length;
    assert.deepEqual(await servedBy(rig.base, '/moving/', 3), ['127.0.0.2', '127.0.0.2', '127.0.0.2']);
    assert.equal(resolve.lookups.length, lookups + 2, 'looked up once (both names), not once a request');
  });

  it('sends to the endpoint with fewer requests in flight (least_request)', async () => {
    a.fallback = 'hold';
    b.fallback = 'hold';
    const first = send(rig.base, '/least/');
    await Promise.race([a.holding(1), b.holding(1)]);
    const busy = a.held() === 1 ? a : b;
    const idle = busy === a ? b : a;
    idle.fallback = 200;
    assert.deepEqual(await servedBy(rig.base, '/least/', 3), [idle.host, idle.host, idle.host]);
    busy.release();
    assert.equal((await first).status, 200);
  });

  it('keeps a hash key on one endpoint (ring_hash on a header), and balances requests without one in turn', async () => {
    for (const user of ['ann', 'bob', 'cyd']) {
      const hosts = await servedBy(rig.base, '/header/', 4, { 'X-User': user });
      assert.equal(new Set(hosts).size, 1, `${user}: ${hosts.join()}`);
    }
    assert.deepEqual((await servedBy(rig.base, '/header/', 2)).sort(), ['127.0.0.1', '127.0.0.2']);
  });

  it('sets a cookie for maglev to hash on when the request has none, and keeps to it after', async () => {
    const first = await send(rig.base, '/cookie/');
    const cookie = String(first.headers['set-cookie']);
    assert.match(cookie, /^sticky=[0-9a-f]{16}; Max-Age=60; Path=\/cookie; HttpOnly$/);
    const host = String(first.headers['x-served-by']).split(':')[0];
    const value = cookie.split(';')[0];
    assert.deepEqual(await servedBy(rig.base, '/cookie/', 4, { Cookie: `other=1; ${value}` }), [
      host,
      host,
      host,
      host,
    ]);
    assert.equal((await send(rig.base, '/cookie/', { headers: { Cookie: value } })).headers['set-cookie'], undefined);
  });

  it("hashes on the client's address with source_ip", async () => {
    assert.equal(new Set(await servedBy(rig.base, '/source/', 4)).size, 1);
  });

  it('ejects an endpoint after 5 failures in a row for 30 s, then longer each time, and takes it back', async () => {
    a.fallback = 503;
    const served = await servedBy(rig.base, '/eject/', 10);
    // In turn until 127.0.0.1 failed 5 times, then 127.0.0.2 alone.
    assert.deepEqual(served, [
      '127.0.0.1',
      '127.0.0.2',
      '127.0.0.1',
      '127.0.0.2',
      '127.0.0.1',
      '127.0.0.2',
      '127.0.0.1',
      '127.0.0.2',
      '127.0.0.1',
      '127.0.0.2',
    ]);
    assert.deepEqual(await servedBy(rig.base, '/eject/', 3), ['127.0.0.2', '127.0.0.2', '127.0.0.2']);
    const cluster = `cluster_eject_${a.address.replace(/[.:]/g, '_')}`;
    assert.deepEqual(rig.reported.ejections, [`${cluster} ${a.address}`]);
    const health = () => rig.gateway.upstreams().find((u) => u.cluster === cluster);
    assert.deepEqual(health(), { cluster, endpoints: 2, ejected: [a.address] });
    clock.advance(30_000);
    // Back in as its time is up, before any request picks it again.
    assert.deepEqual(health(), { cluster, endpoints: 2, ejected: [] });
    assert.ok((await servedBy(rig.base, '/eject/', 2)).includes('127.0.0.1'), 'back after 30 s');
    // Ejected a second time: for 60 s.
    await servedBy(rig.base, '/eject/', 10);
    assert.equal(rig.reported.ejections.length, 2);
    clock.advance(30_000);
    assert.deepEqual(await servedBy(rig.base, '/eject/', 2), ['127.0.0.2', '127.0.0.2']);
    clock.advance(30_000);
    a.fallback = 200;
    assert.ok((await servedBy(rig.base, '/eject/', 2)).includes('127.0.0.1'), 'back after 60 s');
  });
});

describe('passive ejection of an endpoint that refuses connections', () => {
  it('ejects it as it ejects one that answers 5xx, and never the last half of a cluster', async () => {
    const live = await testUpstream();
    const dead = await freePort();
    const clock = testClock();
    const rig = await testGateway(
      [
        mapping('/x/', `http://${live.address}`, { name: 'x', endpoints: [`127.0.0.1:${dead}`, live.address] }),
        mapping('/both/', `http://127.0.0.1:${dead}`, {
          name: 'both',
          endpoints: [`127.0.0.1:${dead}`, `127.0.0.2:${dead}`],
        }),
      ],
      { now: clock.now },
    );
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 14; i++) statuses.push((await send(rig.base, '/x/')).status);
      assert.deepEqual(statuses, [503, 200, 503, 200, 503, 200, 503, 200, 503, 200, 200, 200, 200, 200]);
      for (let i = 0; i < 20; i++) assert.equal((await send(rig.base, '/both/')).status, 503);
      // Of two endpoints, one at most is out (10%, and at least one): both failing, one is ejected.
      assert.deepEqual(rig.reported.ejections, [
        `cluster_127_0_0_1_${live.port} 127.0.0.1:${dead}`,
        `cluster_127_0_0_1_${dead} 127.0.0.1:${dead}`,
      ]);
    } finally {
      await rig.close();
      await live.close();
    }
  });
});
