import assert from 'node:assert/strict';
import { createRateLimitService, findRule, loadLimitsDir, type LoadedLimits } from '../../../src/ratelimit';
import { limitsRefusal, withLimitsFile } from '../../support/limits-file';
import { memoryLogger } from '../../support/memory-logger';
import { timeGrowth } from '../../support/growth';

/** Loads one ratelimit.yaml holding `text`. */
function load(text: string): LoadedLimits {
  return withLimitsFile(text, loadLimitsDir);
}

/** A document with one descriptor `k` whose rate_limit holds `rule` and whose descriptor also holds `extra`. */
const doc = (rule: string, extra = '') => `domain: d\ndescriptors:\n  - key: k\n${extra}    rate_limit:\n${rule}`;

/** What one request for (k, v) is answered, the service reading `text`. */
function ask(text: string) {
  return withLimitsFile(text, (dir) =>
    createRateLimitService({ limitsDir: dir, logger: memoryLogger() }).shouldRateLimit({
      domain: 'd',
      descriptors: [{ entries: [{ key: 'k', value: 'v' }] }],
    }),
  );
}

describe('limits YAML scalars, read as envoyproxy/ratelimit (Go yaml.v2) reads them', () => {
  describe('true/false fields', () => {
    for (const spelling of ['yes', 'Yes', 'YES', 'y', 'Y', 'on', 'On', 'ON', 'true', 'True', 'TRUE']) {
      it(`reads unlimited: ${spelling} as true`, async () => {
        const res = await ask(doc(`      unlimited: ${spelling}\n`));
        assert.deepEqual(res.statuses[0], { code: 'OK', limitRemaining: 4_294_967_295 });
      });
    }

    for (const spelling of [
      'no',
      'No',
      'NO',
      'n',
      'N',
      'off',
      'Off',
      'OFF',
      'false',
      'False',
      'FALSE',
      '',
      '~',
      'null',
    ]) {
      it(`reads shadow_mode: ${spelling || '(nothing)'} as false`, async () => {
        const res = await ask(
          doc('      unit: second\n      requests_per_unit: 0\n', `    shadow_mode: ${spelling}\n`),
        );
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
        assert.match(
          limitsRefusal(doc('      unit: second\n', `    shadow_mode: ${bad}\n`)),
          /ratelimit\.yaml: descriptors\[0\]\.shadow_mode: must be true or false/,
        );
      }
      assert.match(
        limitsRefusal(doc('      unlimited: "yes"\n')),
        /ratelimit\.yaml: descriptors\[0\]\.rate_limit\.unlimited: must be true or false/,
      );
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
      for (const bad of [
        '5.0',
        '1e3',
        '.5',
        '1:30',
        '"5"',
        '-1',
        '4294967296',
        'ten',
        'yes',
        '08',
        '_5',
        '2024-01-01',
      ]) {
        assert.match(
          limitsRefusal(doc(`      unit: minute\n      requests_per_unit: ${bad}\n`)),
          /ratelimit\.yaml: descriptors\[0\]\.rate_limit\.requests_per_unit: must be a whole number from 0 to 4294967295/,
          bad,
        );
      }
    });

    it('counts by a limit written in hex', async () => {
      const codes = await withLimitsFile(doc('      unit: minute\n      requests_per_unit: 0x2\n'), async (dir) => {
        const service = createRateLimitService({ limitsDir: dir, logger: memoryLogger() });
        const one = () =>
          service.shouldRateLimit({ domain: 'd', descriptors: [{ entries: [{ key: 'k', value: 'v' }] }] });
        return [(await one()).overallCode, (await one()).overallCode, (await one()).overallCode];
      });
      assert.deepEqual(codes, ['OK', 'OK', 'OVER_LIMIT']);
    });
  });

  it('loads a key written twice in one mapping with the last value, as yaml.v2 does, and warns where', async () => {
    const { table, warnings } = load(
      'domain: d\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: second\n      requests_per_unit: 1\n      requests_per_unit: 5\n' +
        '  - {key: a, key: b, rate_limit: {unit: minute, unit: hour, requests_per_unit: 2}}\n',
    );
    assert.equal(findRule(table, 'd', [{ key: 'k', value: 'v' }])?.requestsPerUnit, 5);
    assert.equal(findRule(table, 'd', [{ key: 'a', value: 'v' }]), undefined);
    assert.deepEqual(findRule(table, 'd', [{ key: 'b', value: 'v' }])?.currentLimit, {
      requestsPerUnit: 2,
      unit: 'HOUR',
    });
    const file = warnings.map((w) => w.replace(/^.*ratelimit\.yaml: /, ''));
    assert.deepEqual(file, [
      'descriptors[0].rate_limit.requests_per_unit: written twice in one mapping; the last one (line 7) is used, as envoyproxy/ratelimit uses it',
      'descriptors[1].key: written twice in one mapping; the last one (line 8) is used, as envoyproxy/ratelimit uses it',
      'descriptors[1].rate_limit.unit: written twice in one mapping; the last one (line 8) is used, as envoyproxy/ratelimit uses it',
    ]);
  });

  describe('merge keys', () => {
    const merged = (rule: string) =>
      load(
        `domain: d\ndescriptors:\n  - key: base\n    rate_limit: &base {unit: second, requests_per_unit: 1}\n  - key: k\n    rate_limit:\n${rule}`,
      );
    const limitOf = (rule: string) => findRule(merged(rule).table, 'd', [{ key: 'k', value: 'v' }])?.currentLimit;

    it('lets a <<: written after a key override it, as yaml.v2 applies each merge where it stands', () => {
      assert.deepEqual(limitOf('      unit: minute\n      requests_per_unit: 5\n      <<: *base\n'), {
        requestsPerUnit: 1,
        unit: 'SECOND',
      });
    });

    it('lets a key written after a <<: override the merge', () => {
      assert.deepEqual(limitOf('      <<: *base\n      requests_per_unit: 5\n'), {
        requestsPerUnit: 5,
        unit: 'SECOND',
      });
    });

    it('lets the later of two <<: in one mapping win, with no warning for the repeated <<', () => {
      const rule = '      <<: *base\n      <<: {requests_per_unit: 7}\n';
      assert.deepEqual(limitOf(rule), { requestsPerUnit: 7, unit: 'SECOND' });
      assert.deepEqual(merged(rule).warnings, []);
    });

    it('lets the earlier mapping of one <<: [...] win', () => {
      assert.deepEqual(limitOf('      <<: [{requests_per_unit: 3}, *base]\n'), { requestsPerUnit: 3, unit: 'SECOND' });
    });

    it('fills a rate_limit given twice field by field, as yaml.v2 fills the one struct it points at', () => {
      const twice =
        'domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 5}\n    rate_limit: {requests_per_unit: 7}\n';
      const loaded = load(twice);
      assert.deepEqual(findRule(loaded.table, 'd', [{ key: 'k', value: 'v' }])?.currentLimit, {
        requestsPerUnit: 7,
        unit: 'MINUTE',
      });
      assert.match(
        loaded.warnings[0],
        /ratelimit\.yaml: descriptors\[0\]\.rate_limit: written twice in one mapping; the fields of the last one \(line 5\) fill those of the first/,
      );
      const merged =
        'domain: d\ndescriptors:\n  - &k {key: k, rate_limit: {unit: second, requests_per_unit: 3}}\n  - key: j\n    rate_limit: {unit: hour, name: mine}\n    <<: *k\n    key: j\n';
      assert.deepEqual(findRule(load(merged).table, 'd', [{ key: 'j', value: 'v' }])?.currentLimit, {
        name: 'mine',
        requestsPerUnit: 3,
        unit: 'SECOND',
      });
    });

    it('refuses a merge of something that is not a mapping, naming the file', () => {
      assert.match(
        limitsRefusal(doc('      <<: [unit, second]\n')),
        /ratelimit\.yaml: map merge requires map or sequence of maps as the value/,
      );
    });
  });

  it('reports a tab in the indentation once, with its line, and a mistake on another line too', () => {
    const tab = 'domain: d\ndescriptors:\n\t- key: k\n';
    assert.match(limitsRefusal(tab), /^\S*ratelimit\.yaml: Tabs are not allowed as indentation at line 3, column 1$/);
    const two = 'domain: d\ndescriptors:\n\t- key: k\n  - key: [unclosed\n';
    assert.equal(limitsRefusal(two).split('\n').length, 2, limitsRefusal(two));
  });

  it('refuses an anchor whose value holds an alias to itself, as yaml.v2 does', () => {
    const text = 'domain: d\ndescriptors: &loop\n  - key: k\n    descriptors: *loop\n';
    assert.match(limitsRefusal(text), /ratelimit\.yaml: anchor 'loop' value contains itself$/);
  });

  it('loads a file of more than 100000 values written out, which no alias expands', () => {
    const rules = 30_000;
    const text = `domain: d\ndescriptors:\n${Array.from({ length: rules }, (_, i) => `  - {key: k${i}, rate_limit: {unit: minute, requests_per_unit: ${i + 1}}}\n`).join('')}`;
    const { table } = load(text);
    assert.equal(findRule(table, 'd', [{ key: `k${rules - 1}`, value: 'v' }])?.requestsPerUnit, rules);
  });

  it('reads each alias of a file in time that grows with the aliases, not their square', function () {
    // One rate_limit shared by every descriptor: the yaml package walked the whole document for each alias.
    const shared = (aliases: number) =>
      `domain: d\ndescriptors:\n  - key: base\n    rate_limit: &r {unit: minute, requests_per_unit: 5}\n${Array.from({ length: aliases }, (_, i) => `  - {key: k${i}, rate_limit: *r}\n`).join('')}`;
    assert.equal(findRule(load(shared(3)).table, 'd', [{ key: 'k2', value: 'v' }])?.requestsPerUnit, 5);
    const growth = timeGrowth(
      (aliases) => {
        const text = shared(aliases);
        return () => assert.equal(load(text).warnings.length, 0);
      },
      500,
      16_000,
    );
    assert.ok(growth < 300, `32 times the aliases took ${Math.round(growth)} times as long`);
  });

  it('refuses aliases that expand a file past 100000 values, at once', () => {
    let text =
      'domain: d\ndescriptors:\n  - key: k\n    descriptors: &l0 [{key: a}, {key: b}, {key: c}, {key: d}, {key: e}, {key: f}, {key: g}, {key: h}, {key: i}, {key: j}]\n';
    for (let i = 1; i <= 6; i++)
      text += `  - key: k${i}\n    descriptors: &l${i} [${Array.from({ length: 10 }, (_, j) => `{key: x${j}, descriptors: *l${i - 1}}`).join(', ')}]\n`;
    // Expanded, it would hold ten million values: the test's timeout ends a parse that tries.
    assert.match(limitsRefusal(text), /ratelimit\.yaml: .*(alias|100000)/i);
  });

  it('keeps the text of a string field that YAML 1.1 reads as a boolean', async () => {
    const { table } = load(
      'domain: d\ndescriptors:\n  - key: on\n    value: off\n    rate_limit: {unit: second, requests_per_unit: 1}\n',
    );
    assert.ok(findRule(table, 'd', [{ key: 'on', value: 'off' }]));
    assert.equal(findRule(table, 'd', [{ key: 'true', value: 'false' }]), undefined);
  });
});
