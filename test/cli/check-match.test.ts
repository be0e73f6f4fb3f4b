/**
 * `gatehouse check` shows the match fields of each route: a pattern or an
 * exact path by its prefix, method and host patterns, header and query
 * conditions, a regex_rewrite, the share of a canary, a redirect.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkFolder } from '../../src/cli/check';

const record = (name: string, fields: string) =>
  `apiVersion: gateway/v1\nkind: Mapping\nname: ${name}\nservice: 127.0.0.1:9\n${fields}`;

describe('gatehouse check, on match fields', () => {
  let dir: string;
  let lines: string[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-check-match-'));
    writeFileSync(
      join(dir, 'services.yaml'),
      [
        record('catalog', "prefix: '/(en|fr)/catalog/.*'\nprefix_regex: true\nrewrite: ''\n"),
        record('health', 'prefix: /healthz\nprefix_exact: true\n'),
        record('reads', "prefix: /orders/\nmethod: 'GET|HEAD'\nmethod_regex: true\n"),
        record(
          'phones',
          "prefix: /shop/\nregex_headers: {User-Agent: '.*Android.*'}\nquery_parameters: {view: mobile, debug: true}\nregex_query_parameters: {page: '[0-9]+'}\n",
        ),
        record('regional', "prefix: /eu/\nhost: 'eu-[0-9]+\\.example\\.org'\nhost_regex: true\n"),
        record(
          'legacy',
          "prefix: /legacy/\nregex_rewrite: {pattern: '^/legacy/([0-9]+)$', substitution: '/items/\\1'}\n",
        ),
        record('stable', 'prefix: /quotes/\n'),
        record('canary', 'prefix: /quotes/\nweight: 10\n'),
        'apiVersion: gateway/v1\nkind: Mapping\nname: moved\nprefix: /old/\nservice: https://blog.example.org\nhost_redirect: true\nprefix_redirect: /new/\nredirect_response_code: 308\n',
      ].join('---\n'),
    );
    const report = await checkFolder(dir);
    assert.equal(report.ok, true, report.text);
    lines = report.text.split('\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const line = (name: string) => lines.find((l) => l.endsWith(` ${name}`)) ?? assert.fail(`no line for ${name}`);

  it('marks a pattern or an exact path by the prefix, and a method or host pattern', () => {
    assert.match(
      line('catalog'),
      /^0\s+\/\(en\|fr\)\/catalog\/\.\* \(regex\)\s+\*\s+-\s+\*\s+127\.0\.0\.1:9 -> cluster_127_0_0_1_9\s+remote\s+""\s/,
    );
    assert.match(line('health'), /^0\s+\/healthz \(exact\)\s+\*\s/);
    assert.match(line('reads'), /^0\s+\/orders\/\s+GET\|HEAD \(regex\)\s+-\s/);
    assert.match(line('regional'), /\s+eu-\[0-9\]\+\\\.example\\\.org \(regex\)\s+127\.0\.0\.1:9\s/);
  });

  it('lists header patterns and query conditions with the headers', () => {
    assert.match(line('phones'), /\s+user-agent~"\.\*Android\.\*",\?view="mobile",\?debug,\?page~"\[0-9\]\+"\s+\*\s/);
  });

  it('shows a regex_rewrite as the rewrite, the share of each Mapping of a canary, and a redirect', () => {
    assert.match(line('legacy'), /\s+\^\/legacy\/\(\[0-9\]\+\)\$ -> \/items\/\\1\s+required\s/);
    assert.match(line('stable'), /\s+127\.0\.0\.1:9 \(90%\) -> cluster_127_0_0_1_9\s+remote\s/);
    assert.match(line('canary'), /\s+127\.0\.0\.1:9 \(weight 10: 10%\) -> cluster_127_0_0_1_9\s+remote\s/);
    assert.match(line('moved'), /\s+https:\/\/blog\.example\.org \(308 prefix \/new\/\)\s+redirect\s+-\s/);
  });
});
