import assert from 'node:assert/strict';
import { createRateLimitService, findRule, loadLimitsDir, type LoadedLimits } from '../../../src/ratelimit';
import { limitsRefusal, withLimitsFile } from '../../support/limits-file';
import { memoryLogger } from '../../support/memory-logger';

/** The file's limits, its warnings starting at the file's name (the folder is a temporary one). */
function load(text: string): LoadedLimits {
  const loaded = withLimitsFile(text, loadLimitsDir);
  return { ...loaded, warnings: loaded.warnings.map(shown) };
}

const shown = (line: string) => line.replace(/^.*ratelimit\.yaml/, 'ratelimit.yaml');

describe('limits YAML keys, as envoyproxy/ratelimit checks them', () => {
  it('loads every key that service accepts, at its place', () => {
    const { table, warnings } = load(
      [
        'domain: d',
        'descriptors:',
        '  - key: k',
        '    value: v',
        '    shadow_mode: false',
        '    detailed_metric: false',
        '    value_to_metric: false',
        '    quota_mode: false',
        '    rate_limit:',
        '      name: base',
        '      unit: second',
        '      requests_per_unit: 1',
        '  - key: k',
        '    value: w*',
        '    share_threshold: true',
        '    rate_limit:',
        '      unit: second',
        '      requests_per_unit: 2',
        '      replaces:',
        '        - name: base',
        '    descriptors:',
        '      - key: sub',
        '        rate_limit: {unlimited: true}',
        '',
      ].join('\n'),
    );
    assert.deepEqual(warnings, []);
    assert.equal(findRule(table, 'd', [{ key: 'k', value: 'v' }])?.name, 'base');
    assert.deepEqual(findRule(table, 'd', [{ key: 'k', value: 'wx' }])?.replaces, ['base']);
    assert.equal(
      findRule(table, 'd', [
        { key: 'k', value: 'wx' },
        { key: 'sub', value: 's' },
      ])?.unlimited,
      true,
    );
  });

  it('loads the keys of features not applied here, and says so once per key', () => {
    const { table, warnings } = load(
      [
        'domain: d',
        'descriptors:',
        '  - key: a',
        '    detailed_metric: true',
        '    value_to_metric: true',
        '    metadata: {service: {name: svc, weights: [1, 2.5]}}',
        '    rate_limit: {unit: minute, requests_per_unit: 1}',
        '  - key: b',
        '    detailed_metric: yes',
        '    rate_limit: {unit: minute, requests_per_unit: 1}',
        '',
      ].join('\n'),
    );
    assert.equal(findRule(table, 'd', [{ key: 'b', value: 'x' }])?.requestsPerUnit, 1);
    assert.deepEqual(warnings, [
      "ratelimit.yaml: descriptors[0].detailed_metric (and 1 more): detailed_metric names envoyproxy/ratelimit's statistics only; nothing to do here",
      "ratelimit.yaml: descriptors[0].value_to_metric: value_to_metric names envoyproxy/ratelimit's statistics only; nothing to do here",
      'ratelimit.yaml: descriptors[0].metadata: metadata is sent by envoyproxy/ratelimit only as response dynamic metadata (RESPONSE_DYNAMIC_METADATA); not sent here',
    ]);
  });

  it('loads a known key written where that service ignores it, with a warning naming the place', () => {
    const { table, warnings } = load(
      [
        'domain: d',
        'descriptors:',
        '  - key: k',
        '    name: per-key',
        '    unit: hour',
        '    rate_limit:',
        '      unit: second',
        '      requests_per_unit: 3',
        '      shadow_mode: true',
        '',
      ].join('\n'),
    );
    // As in envoyproxy/ratelimit: the misplaced keys change nothing.
    const rule = findRule(table, 'd', [{ key: 'k', value: 'v' }]);
    assert.deepEqual([rule?.name, rule?.currentLimit?.unit, rule?.shadowMode], [undefined, 'SECOND', false]);
    assert.deepEqual(warnings, [
      "ratelimit.yaml: descriptors[0].name: ignored, as envoyproxy/ratelimit ignores it: 'name' is read only in rate_limit or a replaces entry",
      "ratelimit.yaml: descriptors[0].unit: ignored, as envoyproxy/ratelimit ignores it: 'unit' is read only in rate_limit",
      "ratelimit.yaml: descriptors[0].rate_limit.shadow_mode: ignored, as envoyproxy/ratelimit ignores it: 'shadow_mode' is read only in a descriptor",
    ]);
  });

  it('logs the warnings when the service loads and reloads its limits', async () => {
    const text =
      'domain: d\ndescriptors:\n  - key: k\n    detailed_metric: on\n    rate_limit: {unit: second, requests_per_unit: 1}\n';
    await withLimitsFile(text, async (dir) => {
      const logger = memoryLogger();
      const service = createRateLimitService({ limitsDir: dir, logger });
      const said = () =>
        logger.lines.filter((l) => l.level === 'warn').map((l) => shown((l.obj as { warning: string }).warning));
      assert.deepEqual(said(), [
        "ratelimit.yaml: descriptors[0].detailed_metric: detailed_metric names envoyproxy/ratelimit's statistics only; nothing to do here",
      ]);
      await service.reload();
      assert.equal(said().length, 2);
      assert.deepEqual(service.stats().warnings.map(shown), said().slice(1));
    });
  });

  describe('refused, with the file and the path', () => {
    it('a key that service does not know, at any depth', () => {
      assert.match(limitsRefusal('domain: d\nlimits: []\n'), /ratelimit\.yaml: limits: unknown key 'limits'/);
      assert.match(
        limitsRefusal(
          'domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1, burst: 5}\n',
        ),
        /ratelimit\.yaml: descriptors\[0\]\.rate_limit\.burst: unknown key 'burst'/,
      );
      assert.match(
        limitsRefusal('domain: d\ndescriptors:\n  - key: k\n    descriptors:\n      - key: s\n        vaule: x\n'),
        /ratelimit\.yaml: descriptors\[0\]\.descriptors\[0\]\.vaule: unknown key 'vaule'/,
      );
    });

    it('a misspelled key even where that service would ignore the place', () => {
      assert.match(
        limitsRefusal('domain: d\ndescriptors:\n  - key: k\n    rate_limit:\n      replaces:\n        - nmae: x\n'),
        /replaces\[0\]\.nmae: unknown key/,
      );
    });

    it('share_threshold on a value without a wildcard', () => {
      assert.match(
        limitsRefusal(
          'domain: d\ndescriptors:\n  - key: k\n    value: exact\n    share_threshold: true\n    rate_limit: {unit: second, requests_per_unit: 1}\n',
        ),
        /ratelimit\.yaml: descriptors\[0\]\.share_threshold: needs a wildcard value/,
      );
    });
  });
});
