import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { compileDocuments, findRule, LimitsConfigError, loadLimitsDir } from '../../../src/ratelimit';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'envoy-config');

function tempConfig(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-limits-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

function loadError(files: Record<string, string>): LimitsConfigError {
  const dir = tempConfig(files);
  try {
    loadLimitsDir(dir);
  } catch (err) {
    assert.ok(err instanceof LimitsConfigError, String(err));
    return err;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.fail('the configuration was accepted');
}

const e = (...pairs: string[]) => {
  const out = [];
  for (let i = 0; i < pairs.length; i += 2) out.push({ key: pairs[i], value: pairs[i + 1] });
  return out;
};

describe('rate-limit configuration', () => {
  describe('an envoyproxy/ratelimit file', () => {
    const { table, files } = loadLimitsDir(FIXTURE);

    it('loads every YAML document of the ratelimit/ folder unchanged', () => {
      assert.deepEqual([...table.domains.keys()].sort(), ['edge', 'edge_tenants', 'messaging']);
      assert.deepEqual(
        files.map((f) => path.basename(f)),
        ['edge.yml', 'messaging.yaml'],
      );
    });

    it('matches a nested descriptor at the depth of its last entry', () => {
      const rule = findRule(table, 'messaging', e('message_type', 'marketing', 'to_number', '2061111111'));
      assert.deepEqual(rule?.currentLimit, { requestsPerUnit: 5, unit: 'DAY' });
    });

    it('does not apply a rule to a descriptor longer or shorter than its path', () => {
      assert.equal(findRule(table, 'messaging', e('message_type', 'marketing')), undefined);
      assert.equal(findRule(table, 'messaging', e('to_number', '1', 'extra', 'x')), undefined);
      assert.equal(findRule(table, 'messaging', e('client', 'a', 'path', '/admin', 'x', 'y')), undefined);
    });

    it('tries key and value before the key alone', () => {
      assert.equal(findRule(table, 'messaging', e('to_number', '2065550000'))?.unlimited, true);
      assert.equal(findRule(table, 'messaging', e('to_number', '2061111111'))?.requestsPerUnit, 100);
      assert.equal(findRule(table, 'edge', e('remote_address', '192.0.2.5'))?.requestsPerUnit, 0);
    });

    it('reads units in any case and keeps rule names', () => {
      const rule = findRule(table, 'messaging', e('client', 'c1', 'path', '/admin'));
      assert.deepEqual(rule?.currentLimit, { name: 'admin-path', requestsPerUnit: 1, unit: 'MINUTE' });
      assert.equal(rule?.shadowMode, true);
    });

    it('matches a wildcard value by prefix', () => {
      assert.equal(findRule(table, 'messaging', e('client', 'c1', 'path', '/v1/hotels'))?.requestsPerUnit, 3);
      assert.equal(findRule(table, 'messaging', e('client', 'c1', 'path', '/v2')), undefined);
    });

    it('matches a * anywhere in a value, and several, in the order the wildcards are written', () => {
      const table = compileDocuments([
        {
          domain: 'w',
          descriptors: [
            { key: 'path', value: '/api*v1', rate_limit: { unit: 'second', requests_per_unit: 1 } },
            { key: 'path', value: 'svc*ep*rpc', rate_limit: { unit: 'second', requests_per_unit: 2 } },
            { key: 'path', value: '/api*', rate_limit: { unit: 'second', requests_per_unit: 3 } },
            { key: 'path', value: '*', rate_limit: { unit: 'second', requests_per_unit: 4 } },
          ],
        },
      ]);
      const limit = (value: string) => findRule(table, 'w', e('path', value))?.requestsPerUnit;
      assert.deepEqual(
        ['/api/users/v1', '/apiv1', 'svc-a.ep-b.rpc', 'svcXeprpc', '/api/users/v2', '/apv1', 'svc.rpc', 'ep', ''].map(
          limit,
        ),
        [1, 1, 2, 2, 3, 4, 4, 4, 4],
      );
    });

    it('knows nothing of an unknown domain or key', () => {
      assert.equal(findRule(table, 'nope', e('to_number', '1')), undefined);
      assert.equal(findRule(table, 'messaging', e('unknown', '1')), undefined);
      assert.equal(findRule(table, 'messaging', []), undefined);
    });

    it('marks unlimited rules, which have no limit to report', () => {
      const rule = findRule(table, 'messaging', e('ldap', 'x'));
      assert.equal(rule?.unlimited, true);
      assert.equal(rule?.currentLimit, undefined);
    });
  });

  describe('sources', () => {
    it('reads ratelimit.yaml of the config folder, several domains in one file', () => {
      const dir = tempConfig({ 'ratelimit.yaml': 'domain: a\ndescriptors: []\n---\ndomain: b\n---\n' });
      assert.deepEqual([...loadLimitsDir(dir).table.domains.keys()], ['a', 'b']);
      rmSync(dir, { recursive: true });
    });

    it('answers with no domain at all when there is no limits file', () => {
      const dir = tempConfig({});
      assert.equal(loadLimitsDir(dir).table.domains.size, 0);
      rmSync(dir, { recursive: true });
    });

    it('reads the YAML files of ratelimit/ that are not hidden: lock links of editors, AppleDouble and swap files, and folders are passed over', () => {
      const dir = tempConfig({
        'ratelimit/a.yaml': 'domain: a\n',
        'ratelimit/b.yml': 'domain: b\n',
        'ratelimit/._a.yaml': '\u0000\u0005\u0016\u0007 binary resource fork',
        'ratelimit/.a.yaml.swp': 'not yaml: [',
        'ratelimit/a.yaml~': 'domain: a\n',
        'ratelimit/old.yaml/c.yaml': 'domain: c\n',
      });
      // What Emacs leaves while a buffer is modified: a link to nowhere.
      symlinkSync('root@host.1234:1700000000', path.join(dir, 'ratelimit', '.#a.yaml'));
      try {
        const loaded = loadLimitsDir(dir);
        assert.deepEqual([...loaded.table.domains.keys()], ['a', 'b']);
        assert.deepEqual(
          loaded.files.map((f) => path.basename(f)),
          ['a.yaml', 'b.yml'],
        );
      } finally {
        rmSync(dir, { recursive: true });
      }
    });

    it('accepts documents given in code', () => {
      const table = compileDocuments([
        { domain: 'x', descriptors: [{ key: 'k', rate_limit: { unit: 'hour', requests_per_unit: 1 } }] },
      ]);
      assert.equal(findRule(table, 'x', e('k', 'v'))?.windowMs, 3_600_000);
    });
  });

  describe('an invalid configuration', () => {
    it('names the file that cannot be read: a link to nowhere in ratelimit/, or as ratelimit.yaml', () => {
      for (const name of ['ratelimit/gateway.yaml', 'ratelimit.yaml']) {
        const dir = tempConfig({});
        mkdirSync(path.join(dir, 'ratelimit'));
        symlinkSync('nowhere.yaml', path.join(dir, name));
        try {
          assert.throws(
            () => loadLimitsDir(dir),
            (err: unknown) =>
              err instanceof LimitsConfigError &&
              err.file === path.join(dir, name) &&
              /: is a symbolic link to nowhere\.yaml, which does not exist$/.test(err.message),
          );
        } finally {
          rmSync(dir, { recursive: true });
        }
      }
    });

    it('names the file and the field of a bad unit', () => {
      const err = loadError({
        'ratelimit.yaml':
          'domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n',
      });
      assert.match(
        err.message,
        /ratelimit\.yaml: descriptors\[0\]\.rate_limit\.unit: must be one of SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, YEAR/,
      );
    });

    it('names the document when a file holds several', () => {
      const err = loadError({ 'ratelimit.yaml': 'domain: a\n---\ndomain: b\ndescriptors:\n  - value: v\n' });
      assert.match(err.message, /ratelimit\.yaml: \(document 2\) descriptors\[0\]\.key/);
    });

    it('refuses an unknown key, as envoyproxy/ratelimit does', () => {
      const err = loadError({
        'ratelimit.yaml': 'domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, request_per_unit: 1}\n',
      });
      assert.match(err.message, /descriptors\[0\]\.rate_limit.*request_per_unit/);
    });

    it('refuses a unit on an unlimited rule', () => {
      const err = loadError({
        'ratelimit.yaml': 'domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unlimited: true, unit: second}\n',
      });
      assert.match(err.message, /rate_limit\.unit: must not be set when unlimited is true/);
    });

    it('refuses a negative or fractional count', () => {
      const err = loadError({
        'ratelimit.yaml':
          'domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: -1}\n',
      });
      assert.match(err.message, /requests_per_unit: must be a whole number/);
    });

    it('refuses an empty domain', () => {
      assert.match(loadError({ 'ratelimit.yaml': 'domain: ""\n' }).message, /domain: must not be empty/);
    });

    it('refuses a domain defined twice, across files', () => {
      const err = loadError({ 'ratelimit/a.yaml': 'domain: same\n', 'ratelimit/b.yaml': 'domain: same\n' });
      assert.match(err.message, /b\.yaml: domain: duplicate domain 'same'/);
    });

    it('refuses a descriptor defined twice at one level', () => {
      const err = loadError({
        'ratelimit.yaml': 'domain: d\ndescriptors:\n  - key: k\n    value: v\n  - key: k\n    value: v\n',
      });
      assert.match(err.message, /descriptors\[1\]: duplicate descriptor 'd\.k_v'/);
    });

    it('reports YAML syntax errors with the file', () => {
      const err = loadError({ 'ratelimit.yaml': 'domain: [unclosed\n' });
      assert.match(err.message, /^.*ratelimit\.yaml: /);
    });

    it('refuses a file with no document, as envoyproxy/ratelimit does, so that a file emptied by mistake drops no limits', () => {
      for (const text of ['', '# limits come later\n', '---\n']) {
        const err = loadError({ 'ratelimit.yaml': 'domain: kept\n', 'ratelimit/b.yaml': text });
        assert.match(err.file, /ratelimit\/b\.yaml$/);
        assert.deepEqual(
          err.problems,
          [
            'holds no limits: every file needs a domain (envoyproxy/ratelimit refuses an empty one too); remove the file for none',
          ],
          JSON.stringify(text),
        );
      }
    });

    it('reports a YAML syntax error as one line ending with its line and column', () => {
      const err = loadError({ 'ratelimit.yaml': 'domain: d\ndescriptors:\n  - key: k\n   bad\n' });
      assert.deepEqual(err.problems, ['Sequence item without - indicator at line 4, column 1']);
    });

    it('refuses a rule that replaces itself', () => {
      const err = loadError({
        'ratelimit.yaml':
          'domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1, name: n, replaces: [{name: n}]}\n',
      });
      assert.match(err.message, /rate_limit\.replaces: must not name the rule itself/);
    });
  });
});
