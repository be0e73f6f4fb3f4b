import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRateLimitService, findRule, LimitsConfigError, loadLimitsDir, type LoadedLimits } from '../../src/ratelimit';
import { memoryLogger } from './support/silent';

/** Loads one ratelimit.yaml holding `text`. */
function load(text: string): LoadedLimits {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-limits-yaml-'));
  try {
    writeFileSync(path.join(dir, 'ratelimit.yaml'), text);
    return loadLimitsDir(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The problems of a file that is refused. */
function problems(text: string): string {
  try {
    load(text);
  } catch (err) {
    assert.ok(err instanceof LimitsConfigError, String(err));
    return err.message;
  }
  assert.fail('the file was accepted');
}

/** A document with one descriptor `k` whose rate_limit holds `rule` and whose descriptor also holds `extra`. */
const doc = (rule: string, extra = '') => `domain: d\ndescriptors:\n  - key: k\n${extra}    rate_limit:\n${rule}`;

/** What one request for (k, v) is answered, the service reading `text`. */
async function ask(text: string) {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-limits-yaml-'));
  try {
    writeFileSync(path.join(dir, 'ratelimit.yaml'), text);
    const service = createRateLimitService({ limitsDir: dir, logger: memoryLogger() });
    return await service.shouldRateLimit({ domain: 'd', descriptors: [{ entries: [{ key: 'k', value: 'v' }] }] });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('limits YAML scalars, read as envoyproxy/ratelimit (Go yaml.v2) reads them', () => {
  describe('true/false fields', () => {
    for (const spelling of ['yes', 'Yes', 'YES', 'y', 'Y', 'on', 'On', 'ON', 'true', 'True', 'TRUE']) {
      it(`reads unlimited: ${spelling} as true`, async () => {
        const res = await ask(doc(`      unlimited: ${spelling}\n`));
        assert.deepEqual(res.statuses[0], { code: 'OK', limitRemaining: 4_294_967_295 });
      });
    }

    for (const spelling of ['no', 'No', 'NO', 'n', 'N', 'off', 'Off', 'OFF', 'false', 'False', 'FALSE', '', '~', 'null']) {
      it(`reads shadow_mode: ${spelling || '(nothing)'} as false`, async () => {
        const res = await ask(doc('      unit: second\n      requests_per_unit: 0\n', `    shadow_mode: ${spelling}\n`));
        assert.equal(res.overallCode, 'OVER_LIMIT');
      });
    }

    it('reads shadow_mode: on as true: the request passes its limit', async () => {
      const res = await ask(doc('      unit: second\n      requests_per_unit: 0\n', '    shadow_mode: on\n'));
      assert.equal(res.overallCode, 'OK');
      assert.equal(res.statuses[0].limitRemaining, 0);
    });

    it('refuses a quoted "true", a number and other words, naming the file and the field', () => {
      for (const bad of ['"true"', "'yes'", '1', 'enabled', 'tRue']) {
        assert.match(problems(doc('      unit: second\n', `    shadow_mode: ${bad}\n`)), /ratelimit\.yaml: descriptors\[0\]\.shadow_mode: must be true or false/);
      }
      assert.match(problems(doc('      unlimited: "yes"\n')), /ratelimit\.yaml: descriptors\[0\]\.rate_limit\.unlimited: must be true or false/);
    });
  });

  describe('requests_per_unit', () => {
    const counts: [string, number][] = [
      ['10', 10],
      ['0x1F', 31],
      ['0X1f', 31],
      ['0o17', 15],
      ['017', 15],
      ['0b101', 5],
      ['0B101', 5],
      ['1_000', 1000],
      ['0x_ff', 255],
      ['+5', 5],
      ['0', 0],
      ['4294967295', 4_294_967_295],
      ['', 0],
      ['~', 0],
    ];
    for (const [written, read] of counts) {
      it(`reads ${written || '(nothing)'} as ${read}`, () => {
        const { table } = load(doc(`      unit: minute\n      requests_per_unit: ${written}\n`));
        assert.equal(findRule(table, 'd', [{ key: 'k', value: 'v' }])?.requestsPerUnit, read);
      });
    }

    it('refuses what Go does not read as a whole number from 0 to 4294967295', () => {
      for (const bad of ['5.0', '1e3', '.5', '1:30', '"5"', '-1', '4294967296', 'ten', 'yes', '08', '_5', '2024-01-01']) {
        assert.match(
          problems(doc(`      unit: minute\n      requests_per_unit: ${bad}\n`)),
          /ratelimit\.yaml: descriptors\[0\]\.rate_limit\.requests_per_unit: must be a whole number from 0 to 4294967295/,
          bad,
        );
      }
    });

    it('counts by a limit written in hex', async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-limits-yaml-'));
      try {
        writeFileSync(path.join(dir, 'ratelimit.yaml'), doc('      unit: minute\n      requests_per_unit: 0x2\n'));
        const service = createRateLimitService({ limitsDir: dir, logger: memoryLogger() });
        const one = () => service.shouldRateLimit({ domain: 'd', descriptors: [{ entries: [{ key: 'k', value: 'v' }] }] });
        const codes = [(await one()).overallCode, (await one()).overallCode, (await one()).overallCode];
        assert.deepEqual(codes, ['OK', 'OK', 'OVER_LIMIT']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  it('loads a key written twice in one mapping with the last value, as yaml.v2 does, and warns where', async () => {
    const { table, warnings } = load(
      'domain: d\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: second\n      requests_per_unit: 1\n      requests_per_unit: 5\n' +
        '  - {key: a, key: b, rate_limit: {unit: minute, unit: hour, requests_per_unit: 2}}\n',
    );
    assert.equal(findRule(table, 'd', [{ key: 'k', value: 'v' }])?.requestsPerUnit, 5);
    assert.equal(findRule(table, 'd', [{ key: 'a', value: 'v' }]), undefined);
    assert.deepEqual(findRule(table, 'd', [{ key: 'b', value: 'v' }])?.currentLimit, { requestsPerUnit: 2, unit: 'HOUR' });
    const file = warnings.map((w) => w.replace(/^.*ratelimit\.yaml: /, ''));
    assert.deepEqual(file, [
      'descriptors[0].rate_limit.requests_per_unit: written twice in one mapping; the last one (line 7) is used, as envoyproxy/ratelimit uses it',
      'descriptors[1].key: written twice in one mapping; the last one (line 8) is used, as envoyproxy/ratelimit uses it',
      'descriptors[1].rate_limit.unit: written twice in one mapping; the last one (line 8) is used, as envoyproxy/ratelimit uses it',
    ]);
  });

  it('keeps the text of a string field that YAML 1.1 reads as a boolean', async () => {
    const { table } = load('domain: d\ndescriptors:\n  - key: on\n    value: off\n    rate_limit: {unit: second, requests_per_unit: 1}\n');
    assert.ok(findRule(table, 'd', [{ key: 'on', value: 'off' }]));
    assert.equal(findRule(table, 'd', [{ key: 'true', value: 'false' }]), undefined);
  });
});
