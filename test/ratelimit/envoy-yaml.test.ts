import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRateLimitService, LimitsConfigError, loadLimitsDir, type RateLimitService } from '../../src/ratelimit';
import { memoryLogger } from '../support/memory-logger';

const FIXTURE = path.join(__dirname, 'fixtures', 'envoy-yaml');

function loadText(text: string): () => unknown {
  return () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-envoy-yaml-'));
    try {
      writeFileSync(path.join(dir, 'ratelimit.yaml'), text);
      return loadLimitsDir(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

describe('limits YAML written for envoyproxy/ratelimit', () => {
  let service: RateLimitService;
  beforeEach(() => {
    service = createRateLimitService({ limitsDir: FIXTURE, logger: memoryLogger() });
  });

  /** The limit the service applies to one descriptor, or undefined when no rule matched. */
  async function limitOf(...pairs: string[]): Promise<{ name?: string; requestsPerUnit: number } | undefined> {
    const entries = [];
    for (let i = 0; i < pairs.length; i += 2) entries.push({ key: pairs[i], value: pairs[i + 1] });
    const res = await service.shouldRateLimit({ domain: 'compat', descriptors: [{ entries }] });
    const limit = res.statuses[0].currentLimit;
    return (
      limit && { ...(limit.name === undefined ? {} : { name: limit.name }), requestsPerUnit: limit.requestsPerUnit }
    );
  }

  it('matches a value written 00123 only as 00123, not as 123', async () => {
    assert.deepEqual(await limitOf('account', '00123'), { requestsPerUnit: 2 });
    assert.deepEqual(await limitOf('account', '123'), { requestsPerUnit: 5 });
  });

  it('matches values written 0x1F, 1e3, true and 1.50 as the text written', async () => {
    assert.deepEqual(await limitOf('account', '0x1F'), { requestsPerUnit: 3 });
    assert.deepEqual(await limitOf('account', '31'), { requestsPerUnit: 5 });
    assert.deepEqual(await limitOf('account', '1e3'), { name: '0777', requestsPerUnit: 2 });
    assert.deepEqual(await limitOf('account', '1000'), { requestsPerUnit: 5 });
    assert.deepEqual(await limitOf('flag', 'true'), { requestsPerUnit: 1 });
    assert.deepEqual(await limitOf('region', 'eu', 'zone', '1.50'), { requestsPerUnit: 2 });
    assert.equal(await limitOf('region', 'eu', 'zone', '1.5'), undefined);
  });

  it('applies merge keys, the merged-in fields giving way to those written beside them', async () => {
    // `<<: *flag` takes the key and the limit of the descriptor above, with its own value.
    assert.deepEqual(await limitOf('flag', 'yes'), { requestsPerUnit: 1 });
    assert.equal(await limitOf('flag', 'other'), undefined);
  });

  it('reads an empty value as none: the key alone matches any value', async () => {
    assert.deepEqual(await limitOf('account', 'anyone'), { requestsPerUnit: 5 });
  });

  it('counts and refuses by the limits it merged in', async () => {
    const ask = () =>
      service.shouldRateLimit({ domain: 'compat', descriptors: [{ entries: [{ key: 'account', value: '0x1F' }] }] });
    const answers = [await ask(), await ask(), await ask(), await ask()];
    assert.deepEqual(
      answers.map((a) => a.overallCode),
      ['OK', 'OK', 'OK', 'OVER_LIMIT'],
    );
  });

  describe('still refused, with the file and the field', () => {
    it('an empty key', () => {
      assert.throws(
        loadText('domain: d\ndescriptors:\n  - key:\n    value: v\n'),
        /ratelimit\.yaml: descriptors\[0\]\.key: must not be empty/,
      );
    });

    it('an empty domain', () => {
      assert.throws(loadText('domain:\n'), /ratelimit\.yaml: domain: must not be empty/);
    });

    it('a value that is not a scalar', () => {
      assert.throws(
        loadText('domain: d\ndescriptors:\n  - key: k\n    value: [a, b]\n'),
        /ratelimit\.yaml: descriptors\[0\]\.value: must be a string/,
      );
    });

    it('a merge key that merges no mapping', () => {
      assert.throws(
        loadText('domain: d\ndescriptors:\n  - key: k\n    rate_limit: {<<: 5, unit: second}\n'),
        (err: unknown) => {
          assert.ok(err instanceof LimitsConfigError, String(err));
          assert.match(err.message, /^.*ratelimit\.yaml: .*merge/i);
          return true;
        },
      );
    });

    it('a count merged in as a quoted string, as envoyproxy/ratelimit refuses it', () => {
      const merged =
        'domain: d\ndescriptors:\n  - key: k\n    rate_limit: {<<: {requests_per_unit: "5"}, unit: second}\n';
      assert.throws(loadText(merged), /descriptors\[0\]\.rate_limit\.requests_per_unit: must be a whole number/);
    });
  });
});
