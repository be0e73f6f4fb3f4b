/**
 * The diag page and its JSON show the match fields of each route: patterns,
 * exact paths, header and query conditions, regex_rewrite, the share of a
 * canary, a redirect, and labels in Emissary's v3alpha1 form.
 */
import assert from 'node:assert/strict';
import { describeGateway, renderDiagPage, type DiagSnapshot } from '../../src/diag';
import { mappingSchema } from '../../src/gateway/config/schema';
import { BUILT_IN } from '../support/diag-sample';

function snapshot(): DiagSnapshot {
  const m = (name: string, fields: Record<string, unknown>) =>
    mappingSchema.parse({ apiVersion: 'gateway/v1', kind: 'Mapping', name, service: 'api', prefix: '/v1/', ...fields });
  const mappings = [
    m('catalog', { prefix: '/(en|fr)/.*', prefix_regex: true, method: 'GET|HEAD', method_regex: true }),
    m('phones', {
      regex_headers: { 'User-Agent': '.*Android.*' },
      query_parameters: { view: 'mobile' },
      host: 'eu-[0-9]+\\.example\\.org',
      host_regex: true,
    }),
    m('legacy', { prefix: '/legacy/', regex_rewrite: { pattern: '^/legacy/(.*)$', substitution: '/\\1' } }),
    m('stable', { prefix: '/quotes/' }),
    m('canary', { prefix: '/quotes/', weight: 10 }),
    m('moved', { prefix: '/old/', service: 'blog.example.org', host_redirect: true, path_redirect: '/new' }),
    m('limited', {
      prefix: '/limited/',
      labels: {
        ambassador: [
          {
            limits: [
              { request_headers: { key: 'tenant', header_name: 'X-Tenant' } },
              { remote_address: {} },
              'catalog',
            ],
          },
        ],
      },
    }),
  ];
  return describeGateway({
    version: '0',
    startedAt: new Date(),
    config: { mappings, sources: [] },
    configDir: 'c',
    loadedAt: new Date(),
    modules: BUILT_IN,
  });
}

describe('diag/snapshot, on match fields', () => {
  it('gives each field in the JSON as Emissary names it, and the share of a canary', () => {
    const [catalog, phones, legacy, stable, canary, moved] = snapshot().routes;
    assert.equal(catalog.prefix_regex, true);
    assert.equal(catalog.method_regex, true);
    assert.deepEqual(phones.regex_headers, { 'user-agent': '.*Android.*' });
    assert.deepEqual(phones.query_parameters, { view: 'mobile' });
    assert.deepEqual([phones.hostname, phones.host_regex], ['eu-[0-9]+\\.example\\.org', true]);
    assert.deepEqual(legacy.regex_rewrite, { pattern: '^/legacy/(.*)$', substitution: '/\\1' });
    assert.deepEqual([stable.share, canary.share, canary.weight], [90, 10, 10]);
    assert.deepEqual([moved.target, moved.redirect], ['redirect', { response_code: 301, path_redirect: '/new' }]);
    assert.equal('share' in moved, false);
  });

  it('shows them on the page', () => {
    const rows = renderDiagPage(snapshot()).split('<tr>').slice(2);
    assert.match(
      rows[0],
      /<td class="mono">\/\(en\|fr\)\/\.\* <span class="none">pattern<\/span><\/td><td><ul class="plain"><li><code>GET\|HEAD<\/code> <span class="none">pattern<\/span><\/li><\/ul><\/td>/,
    );
    assert.match(
      rows[1],
      /<li><code>user-agent: \.\*Android\.\*<\/code> <span class="none">pattern<\/span><\/li><li><code>\?view: mobile<\/code><\/li>/,
    );
    assert.match(
      rows[1],
      /<li><span class="none">host<\/span> <code>eu-\[0-9\]\+\\\.example\\\.org<\/code> <span class="none">pattern<\/span><\/li>/,
    );
    assert.match(rows[2], /<td><code>\^\/legacy\/\(\.\*\)\$<\/code> → <code>\/\\1<\/code><\/td>/);
    assert.match(
      rows[4],
      /api <span class="none nowrap">in-process<\/span><br><span class="none">weight 10: 10% of its match<\/span><\/td>/,
    );
    assert.match(
      rows[5],
      /<td class="service"><span class="none">301 to<\/span> blog\.example\.org <span class="none">path<\/span> <code>\/new<\/code><\/td>/,
    );
    assert.match(
      rows[6],
      /<li title="domain ambassador"><span class="none">ambassador:<\/span> <span class="label"><code>tenant<\/code> ← <code>x-tenant<\/code><\/span>, <span class="label"><code>remote_address<\/code><\/span>, <span class="label"><code>&quot;catalog&quot;<\/code><\/span><\/li>/,
    );
  });
});
