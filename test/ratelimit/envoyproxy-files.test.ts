import assert from 'node:assert/strict';
import path from 'node:path';
import {
  createRateLimitService,
  UNLIMITED_REMAINING,
  type RateLimitDescriptor,
  type RateLimitService,
} from '../../src/ratelimit';
import { memoryLogger } from '../support/memory-logger';

/** Files of envoyproxy/ratelimit, each fixture folder saying where its file comes from. */
const FIXTURES = path.join(__dirname, 'fixtures', 'envoyproxy-ratelimit');
// 2024-01-01T00:00:10Z: 10 s into a minute, an hour and a day.
const T0 = Date.UTC(2024, 0, 1, 0, 0, 10);

function d(...pairs: string[]): RateLimitDescriptor {
  const entries = [];
  for (let i = 0; i < pairs.length; i += 2) entries.push({ key: pairs[i], value: pairs[i + 1] });
  return { entries };
}

function serviceOf(fixture: string, logger = memoryLogger()): RateLimitService {
  return createRateLimitService({ limitsDir: path.join(FIXTURES, fixture), now: () => T0, logger });
}

/** The overall codes of `times` requests of `domain` with these descriptors, one after the other. */
async function codes(
  service: RateLimitService,
  domain: string,
  descriptors: RateLimitDescriptor[],
  times: number,
): Promise<string[]> {
  const out = [];
  for (let i = 0; i < times; i++) out.push((await service.shouldRateLimit({ domain, descriptors })).overallCode);
  return out;
}

const okThenOver = (ok: number) => [...Array<string>(ok).fill('OK'), 'OVER_LIMIT'];

describe('configuration files of envoyproxy/ratelimit, loaded unchanged', () => {
  describe('its demo (examples/ratelimit/config/example.yaml), with the requests its README lists', () => {
    let service: RateLimitService;
    beforeEach(() => {
      service = serviceOf('example');
    });

    it('curl /test: source and destination cluster, 1 a minute', async () => {
      assert.deepEqual(
        await codes(service, 'rl', [d('source_cluster', 'proxy', 'destination_cluster', 'mock')], 2),
        okThenOver(1),
      );
    });

    it('curl /header -H "foo: foo": 2 a minute', async () => {
      assert.deepEqual(await codes(service, 'rl', [d('foo', 'foo')], 3), okThenOver(2));
    });

    it('curl /twoheader -H "foo: foo" -H "bar: bar": 3 a minute', async () => {
      assert.deepEqual(await codes(service, 'rl', [d('foo', 'foo', 'bar', 'bar')], 4), okThenOver(3));
    });

    it('curl /twoheader -H "foo: foo" -H "baz: baz": rate limited, 1 a second', async () => {
      assert.deepEqual(await codes(service, 'rl', [d('foo', 'foo', 'baz', 'baz')], 2), okThenOver(1));
    });

    it('curl /twoheader -H "foo: foo" -H "bar: banned": refused from the first request', async () => {
      const res = await service.shouldRateLimit({ domain: 'rl', descriptors: [d('foo', 'foo', 'bar', 'banned')] });
      assert.deepEqual(res, {
        overallCode: 'OVER_LIMIT',
        statuses: [
          {
            code: 'OVER_LIMIT',
            currentLimit: { requestsPerUnit: 0, unit: 'MINUTE' },
            limitRemaining: 0,
            durationUntilResetMs: 50_000,
          },
        ],
      });
    });

    it('curl /twoheader -H "foo: foo" -H "baz: shady": never limited, shadow_mode', async () => {
      assert.deepEqual(await codes(service, 'rl', [d('foo', 'foo', 'baz', 'shady')], 5), Array(5).fill('OK'));
    });

    it('curl /twoheader -H "foo: foo" -H "baz: not-so-shady": subject to the 1 a second of baz', async () => {
      assert.deepEqual(await codes(service, 'rl', [d('foo', 'foo', 'baz', 'not-so-shady')], 2), okThenOver(1));
    });

    it('answers the unlimited bay and qux with OK and 4294967295 remaining', async () => {
      const res = await service.shouldRateLimit({
        domain: 'rl',
        descriptors: [d('foo', 'foo', 'bay', 'x'), d('qux', 'y')],
      });
      assert.deepEqual(res.statuses, [
        { code: 'OK', limitRemaining: UNLIMITED_REMAINING },
        { code: 'OK', limitRemaining: UNLIMITED_REMAINING },
      ]);
    });
  });

  describe('the examples of its README', () => {
    let service: RateLimitService;
    let logger: ReturnType<typeof memoryLogger>;
    beforeEach(() => {
      logger = memoryLogger();
      service = serviceOf('readme', logger);
    });

    it('1: 500 a second for the database users; none for a database not listed', async () => {
      const res = await service.shouldRateLimit({
        domain: 'mongo_cps',
        descriptors: [d('database', 'users'), d('database', 'other')],
      });
      assert.equal(res.statuses[0].limitRemaining, 499);
      assert.deepEqual(res.statuses[1], { code: 'OK', limitRemaining: 0 });
    });

    it('2: 5 marketing messages a day to a number, 100 of any kind; several descriptors answered together', async () => {
      const both = [d('message_type', 'marketing', 'to_number', '2061111111'), d('to_number', '2061111111')];
      assert.deepEqual(await codes(service, 'messaging', both, 6), okThenOver(5));
      // The refused sixth request counted nowhere: here on purpose, where envoyproxy/ratelimit counts it.
      const res = await service.shouldRateLimit({ domain: 'messaging', descriptors: [d('to_number', '2061111111')] });
      assert.equal(res.statuses[0].limitRemaining, 94);
    });

    it('3: key and value before the key alone: 50.0.0.5 is refused, 50.0.0.1 gets 10 a second', async () => {
      assert.deepEqual(await codes(service, 'edge_proxy_per_ip', [d('remote_address', '50.0.0.5')], 1), ['OVER_LIMIT']);
      assert.deepEqual(
        await codes(service, 'edge_proxy_per_ip', [d('remote_address', '50.0.0.1')], 11),
        okThenOver(10),
      );
    });

    it('4: a two-entry descriptor matches the nested rule, a one-entry one does not', async () => {
      const nested = await service.shouldRateLimit({
        domain: 'example4',
        descriptors: [d('key', 'value', 'subkey', 'subvalue'), d('key', 'value')],
      });
      assert.equal(nested.statuses[0].currentLimit?.requestsPerUnit, 300);
      assert.deepEqual(nested.statuses[1], { code: 'OK', limitRemaining: 0 });
    });

    it('5: unlimited ldap, 100 a minute for azure', async () => {
      const res = await service.shouldRateLimit({ domain: 'internal', descriptors: [d('ldap', 'x'), d('azure', 'y')] });
      assert.deepEqual(res.statuses[0], { code: 'OK', limitRemaining: UNLIMITED_REMAINING });
      assert.equal(res.statuses[1].limitRemaining, 99);
    });

    it('6: user-a in shadow mode is never limited; user-b gets 20 a second', async () => {
      assert.deepEqual(
        await codes(service, 'example6', [d('service', 'auth-service', 'user', 'user-a')], 12),
        Array(12).fill('OK'),
      );
      assert.deepEqual(
        await codes(service, 'example6', [d('service', 'auth-service', 'user', 'user-b')], 21),
        okThenOver(20),
      );
    });

    it('7: the replacing limit applies alone, and leaves the replaced one untouched', async () => {
      const both = [d('key_1', 'value_1', 'user', 'bkthomps'), d('key_2', 'value_2', 'user', 'bkthomps')];
      const res = await service.shouldRateLimit({ domain: 'example7', descriptors: both });
      assert.deepEqual(res.statuses[0], { code: 'OK', limitRemaining: 0 });
      assert.equal(res.statuses[1].limitRemaining, 9);
      assert.deepEqual(await codes(service, 'example7', both, 10), okThenOver(9));
      assert.deepEqual(await codes(service, 'example7', [d('key_1', 'value_1', 'user', 'bkthomps')], 6), okThenOver(5));
    });

    it('8: detailed_metric loads, with a warning that it names statistics only', async () => {
      assert.deepEqual(await codes(service, 'example8', [d('key1', 'unspecified_value')], 11), okThenOver(10));
      assert.equal(
        (await service.shouldRateLimit({ domain: 'example8', descriptors: [d('key1', 'value1')] })).statuses[0]
          .limitRemaining,
        19,
      );
      const warned = logger.lines.filter((l) => l.level === 'warn').map((l) => (l.obj as { warning: string }).warning);
      assert.equal(warned.length, 1);
      assert.match(
        warned[0],
        /readme-examples\.yaml: \(document 8\) descriptors\[0\]\.detailed_metric: detailed_metric names envoyproxy\/ratelimit's statistics only/,
      );
    });

    it('9: a wildcard value counts each value it matches apart', async () => {
      assert.deepEqual(await codes(service, 'example9', [d('key1', 'value_1')], 21), okThenOver(20));
      assert.equal(
        (await service.shouldRateLimit({ domain: 'example9', descriptors: [d('key1', 'value_2')] })).statuses[0]
          .limitRemaining,
        19,
      );
    });
  });

  describe('its test configuration (test/config/basic_config.yaml)', () => {
    it('applies the most specific rule at each depth, and none to a value listed without a limit', async () => {
      const service = serviceOf('basic');
      const res = await service.shouldRateLimit({
        domain: 'test-domain',
        descriptors: [
          d('key1', 'value1', 'subkey1', 'other'),
          d('key1', 'value1', 'subkey1', 'subvalue1'),
          d('key2', 'other'),
          d('key2', 'value2'),
          d('key2', 'value3'),
          d('key5', 'value5', 'subkey5', 'subvalue5'),
          d('key1', 'value1'),
        ],
      });
      assert.deepEqual(
        res.statuses.map((s) => s.currentLimit && [s.currentLimit.requestsPerUnit, s.currentLimit.unit]),
        [[5, 'SECOND'], [10, 'SECOND'], [20, 'MINUTE'], [30, 'MINUTE'], undefined, [25, 'DAY'], undefined],
      );
    });
  });

  describe('its share_threshold test configuration (test/config/share_threshold.yaml)', () => {
    let service: RateLimitService;
    beforeEach(() => {
      service = serviceOf('share-threshold');
    });

    const remaining = async (...descriptors: RateLimitDescriptor[]) =>
      (await service.shouldRateLimit({ domain: 'test-domain', descriptors })).statuses.map((s) => s.limitRemaining);

    it('shares one limit among the values of a trailing wildcard', async () => {
      assert.deepEqual(await remaining(d('files', 'files/a.pdf'), d('files', 'files/b.pdf')), [99, 98]);
    });

    it('shares one limit among the values of a wildcard in the middle, and of several', async () => {
      assert.deepEqual(await remaining(d('midpath', '/api/users/v1'), d('midpath', '/api/orders/v1')), [99, 98]);
      assert.deepEqual(await remaining(d('multiroute', 'svc-a.ep-1.rpc'), d('multiroute', 'svc-b.ep-2.rpc')), [49, 48]);
      assert.deepEqual(
        await remaining(d('tenant', 'tA-prod', 'resource', 'res-1-v2'), d('tenant', 'tB-prod', 'resource', 'res-2-v2')),
        [59, 58],
      );
    });

    it('prefers an explicit value to a shared wildcard', async () => {
      assert.deepEqual(await remaining(d('file', 'test1'), d('file', 'test2'), d('file', 'test3')), [49, 99, 98]);
    });

    it('counts apart the values of a wildcard with share_threshold: false', async () => {
      assert.deepEqual(
        await remaining(
          d('path', 'path/a', 'file', 'file/x', 'type', 't'),
          d('path', 'path/b', 'file', 'file/y', 'type', 't'),
          d('path', 'path/c', 'file', 'file/x', 'type', 't'),
        ),
        [119, 119, 118],
      );
    });
  });
});
