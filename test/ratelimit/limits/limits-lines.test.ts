import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { compileDocuments, LimitsConfigError, loadLimitsDir } from '../../../src/ratelimit';

/** The problems loading `files` (name to text) is refused with. */
function problems(files: Record<string, string>): readonly string[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-limits-'));
  try {
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    }
    loadLimitsDir(dir);
  } catch (err) {
    assert.ok(err instanceof LimitsConfigError, String(err));
    return err.problems;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.fail('the limits were accepted');
}

const lines = (...l: string[]) => `${l.join('\n')}\n`;

describe('limits problems and their lines', () => {
  it('names the line of each problem, all of them at once', () => {
    const text = lines(
      'domain: test',
      'descriptors:',
      '  - key: a',
      '    rate_limit:',
      '      unit: minutes',
      '      requests_per_unit: 5',
      '  - key: b',
      '    rate_limit:',
      '      unit: minute',
      '      requests_per_unit: -1',
      '  - key: c',
      '    shadow_mode: "yes"',
      '    descriptors:',
      '      - key: d',
      '        rate_limit: {unit: hour, requests_per_unit: 1.5}',
    );
    assert.deepEqual(problems({ 'ratelimit.yaml': text }), [
      'descriptors[0].rate_limit.unit: must be one of SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, YEAR (line 5)',
      'descriptors[1].rate_limit.requests_per_unit: must be a whole number from 0 to 4294967295 (decimal, 0x hex, 0o or 0 octal, 0b binary) (line 10)',
      'descriptors[2].shadow_mode: must be true or false (or yes/no, on/off, y/n, unquoted) (line 12)',
      'descriptors[2].descriptors[0].rate_limit.requests_per_unit: must be a whole number from 0 to 4294967295 (decimal, 0x hex, 0o or 0 octal, 0b binary) (line 15)',
    ]);
  });

  it('reports an unknown key and a bad value of one file together', () => {
    const text = lines(
      'domain: d',
      'descriptors:',
      '  - key: k',
      '    rate_limit:',
      '      unti: minute',
      '      requests_per_unit: 5',
      '  - key: j',
      '    foo: 1',
    );
    assert.deepEqual(problems({ 'ratelimit.yaml': text }), [
      "descriptors[0].rate_limit.unti: unknown key 'unti' (envoyproxy/ratelimit refuses it too) (line 5)",
      "descriptors[1].foo: unknown key 'foo' (envoyproxy/ratelimit refuses it too) (line 8)",
      'descriptors[0].rate_limit.unit: must be one of SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, YEAR (line 4)',
    ]);
  });

  it('reports a bad unit and a bad count of one rule together, and a count wrong in two ways once', () => {
    const text = lines(
      'domain: d',
      'descriptors:',
      '  - key: a',
      '    rate_limit: {unit: fortnight, requests_per_unit: -3}',
      '  - key: b',
      '    rate_limit: {unit: minute, requests_per_unit: 99999999999999999999999}',
    );
    const count = 'must be a whole number from 0 to 4294967295 (decimal, 0x hex, 0o or 0 octal, 0b binary)';
    assert.deepEqual(problems({ 'ratelimit.yaml': text }), [
      'descriptors[0].rate_limit.unit: must be one of SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, YEAR (line 4)',
      `descriptors[0].rate_limit.requests_per_unit: ${count} (line 4)`,
      `descriptors[1].rate_limit.requests_per_unit: ${count} (line 6)`,
    ]);
  });

  it('names the line of the mapping that lacks a field', () => {
    assert.deepEqual(
      problems({
        'ratelimit.yaml': lines(
          'domain: d',
          'descriptors:',
          '  - key: k',
          '  - value: v',
          '    rate_limit: {unlimited: true}',
        ),
      }),
      ['descriptors[1].key: is required (line 4)'],
    );
  });

  it('counts the lines of the file, not of the document, when a file holds several', () => {
    assert.deepEqual(
      problems({ 'ratelimit.yaml': lines('domain: a', '---', 'domain: b', 'descriptors:', '  - value: v') }),
      ['(document 2) descriptors[0].key: is required (line 5)'],
    );
  });

  it('names the line of a descriptor written twice, and of a domain that another file has', () => {
    assert.deepEqual(
      problems({
        'ratelimit.yaml': lines(
          'domain: d',
          'descriptors:',
          '  - key: k',
          '    value: v',
          '  - key: k',
          '    value: v',
        ),
      }),
      ["descriptors[1]: duplicate descriptor 'd.k_v' (line 5)"],
    );
    assert.deepEqual(
      problems({ 'ratelimit/a.yaml': 'domain: same\n', 'ratelimit/b.yaml': '# the same again\ndomain: same\n' }),
      ["domain: duplicate domain 'same' (line 2)"],
    );
    assert.deepEqual(
      problems({
        'ratelimit.yaml': lines(
          'domain: d',
          'descriptors:',
          '  - key: k',
          '    value: exact',
          '    share_threshold: true',
        ),
      }),
      [
        "descriptors[0].share_threshold: needs a wildcard value (one holding '*'), as envoyproxy/ratelimit requires (line 5)",
      ],
    );
  });

  it('names the line where a merged value is merged', () => {
    const text = lines(
      'domain: d',
      'descriptors:',
      '  - key: k',
      '    rate_limit:',
      '      <<: {unit: fortnight}',
      '      requests_per_unit: 1',
    );
    assert.deepEqual(problems({ 'ratelimit.yaml': text }), [
      'descriptors[0].rate_limit.unit: must be one of SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, YEAR (line 5)',
    ]);
  });

  it('gives no line for documents given in code, which have none', () => {
    assert.throws(
      () => compileDocuments([{ domain: 'd', descriptors: [{ key: 'k', rate_limit: { unit: 'fortnight' } }] }]),
      (err: unknown) =>
        err instanceof LimitsConfigError &&
        err.problems[0] ===
          'descriptors[0].rate_limit.unit: must be one of SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, YEAR',
    );
  });
});
