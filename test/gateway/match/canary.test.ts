/**
 * Canary releases: Mappings with the same match share its requests by
 * `weight`, the unweighted sharing what is left, through the gateway to a
 * real upstream, with the random source replaced by an even spread of draws
 * (so that counts are exact), and once with Math.random in bounds that
 * cannot flake.
 */
import assert from 'node:assert/strict';
import { ConfigError, configFromRecords, createGateway } from '../../../src/gateway';
import { RouteTable } from '../../../src/gateway/match/route-table';
import { configOf } from '../../support/records';
import { routingRig, type Rig } from '../../support/routing-rig';

/** Draws 0, 1/n, 2/n ... (n - 1)/n, then again: every share of a group shows exactly. */
function evenDraws(n: number): () => number {
  let i = 0;
  return () => (i++ % n) / n;
}

/** How many of `n` requests to `path` each Mapping took. */
async function counts(
  rig: Rig,
  path: string,
  n: number,
  options: Parameters<Rig['call']>[1] = {},
): Promise<Record<string, number>> {
  const seen: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const res = await rig.call(path, options);
    assert.equal(res.status, 200, res.answer.text);
    seen[res.route!] = (seen[res.route!] ?? 0) + 1;
  }
  return seen;
}

describe('gateway canary releases by weight', () => {
  let rig: Rig;

  before(async () => {
    rig = await routingRig(
      () => [
        { name: 'stable', prefix: '/quotes/', rewrite: '/v1/' },
        { name: 'canary', prefix: '/quotes/', rewrite: '/v2/', weight: 10 },
        { name: 'a', prefix: '/split/', weight: 20 },
        { name: 'b', prefix: '/split/', weight: 30 },
        { name: 'c', prefix: '/split/' },
        { name: 'd', prefix: '/split/' },
        { name: 'small', prefix: '/ratio/', weight: 10 },
        { name: 'large', prefix: '/ratio/', weight: 30 },
        { name: 'drained', prefix: '/drain/', weight: 0 },
        { name: 'current', prefix: '/drain/' },
        { name: 'alone', prefix: '/alone/', weight: 10 },
        { name: 'beta', prefix: '/quotes/', headers: { 'X-Beta': true } },
      ],
      { random: evenDraws(100) },
    );
  });
  after(() => rig.close());

  it('gives a weighted Mapping its share of the requests of its match, and the unweighted one the rest', async () => {
    assert.deepEqual(await counts(rig, '/quotes/today', 100), { stable: 90, canary: 10 });
  });

  it('forwards each request with the rewrite of the Mapping that took it', async () => {
    const urls = new Set<string>();
    for (let i = 0; i < 100; i++) urls.add((await rig.call('/quotes/today')).url!);
    assert.deepEqual([...urls].sort(), ['/v1/today', '/v2/today']);
  });

  it('shares what the weights leave equally among the unweighted Mappings', async () => {
    assert.deepEqual(await counts(rig, '/split/x', 100), { a: 20, b: 30, c: 25, d: 25 });
  });

  it('reads weights that all are given and add up to less than 100 as proportions', async () => {
    assert.deepEqual(await counts(rig, '/ratio/x', 100), { small: 25, large: 75 });
  });

  it('gives a Mapping of weight 0 nothing, and a Mapping alone everything whatever its weight', async () => {
    assert.deepEqual(await counts(rig, '/drain/x', 100), { current: 100 });
    assert.deepEqual(await counts(rig, '/alone/x', 20), { alone: 20 });
  });

  it('keeps a Mapping with another match out of the split', async () => {
    assert.deepEqual(await counts(rig, '/quotes/today', 50, { headers: { 'X-Beta': '1' } }), { beta: 50 });
  });

  it('does not take a request that a weight sends elsewhere for one spelt or overridden to route apart', async () => {
    const seen = await counts(rig, '/quotes/today;v=1', 100, { headers: { 'X-HTTP-Method-Override': 'PUT' } });
    assert.deepEqual(seen, { stable: 90, canary: 10 });
  });
});

describe('gateway canary releases with Math.random', () => {
  it('splits 20 000 requests within seven standard deviations of the weights', () => {
    const result = configFromRecords([
      { apiVersion: 'gateway/v1', kind: 'Mapping', name: 'stable', prefix: '/q/', service: 'svc' },
      { apiVersion: 'gateway/v1', kind: 'Mapping', name: 'canary', prefix: '/q/', service: 'svc', weight: 10 },
    ]);
    assert.ok(result.ok);
    const table = new RouteTable(result.config.mappings.map((m) => ({ mapping: m, prefix: m.prefix, target: m.name })));
    let canary = 0;
    for (let i = 0; i < 20_000; i++) if (table.match('/q/x', 'GET', {})?.target === 'canary') canary++;
    // Expected 2000, standard deviation 42.4.
    assert.ok(canary > 1700 && canary < 2300, String(canary));
  });
});

describe('gateway canary groups that cannot be served', () => {
  function refused(...records: Record<string, unknown>[]): string[] {
    const mappings = records.map((r) => ({
      apiVersion: 'gateway/v1',
      kind: 'Mapping',
      prefix: '/q/',
      service: '127.0.0.1:9',
      ...r,
    }));
    try {
      void createGateway({ config: configOf(...mappings) }).close();
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      return err.problems.map((p) => p.text);
    }
    return assert.fail('the configuration should have been refused');
  }

  it('refuses weights that add up to more than 100, on each weighted Mapping', () => {
    assert.deepEqual(refused({ name: 'one', weight: 60 }, { name: 'two', weight: 50 }, { name: 'three' }), [
      'Mapping one: weight: the weights of the Mappings with this match add up to 110, over 100',
      'Mapping two: weight: the weights of the Mappings with this match add up to 110, over 100',
    ]);
  });

  it('refuses a group whose weights are all 0', () => {
    assert.deepEqual(refused({ name: 'one', weight: 0 }, { name: 'two', weight: 0 }), [
      'Mapping one: weight: the weights of the Mappings with this match are all 0: none of them would take its requests',
      'Mapping two: weight: the weights of the Mappings with this match are all 0: none of them would take its requests',
    ]);
  });

  it('refuses Mappings sharing a match that differ in bypass_auth or labels, so that no weight decides auth or limits', () => {
    assert.deepEqual(refused({ name: 'guarded' }, { name: 'open', weight: 5, bypass_auth: true }), [
      "Mapping open: bypass_auth: differs from Mapping 'guarded', which has the same match: the weight split would decide whether a request is authenticated",
    ]);
    const labels = { gateway: [{ request_label_group: ['quotes'] }] };
    assert.deepEqual(refused({ name: 'limited', labels }, { name: 'free', weight: 5 }), [
      "Mapping free: labels: differ from those of Mapping 'limited', which has the same match: Mappings sharing a match share their labels, as in Emissary",
    ]);
  });

  it('refuses a redirect that shares its match with another Mapping', () => {
    assert.deepEqual(
      refused({ name: 'served' }, { name: 'moved', service: 'quotes.example.com', host_redirect: true }),
      [
        "Mapping moved: host_redirect: a redirect shares its match with no other Mapping, and Mapping 'served', which has the same match is not one",
      ],
    );
  });
});
