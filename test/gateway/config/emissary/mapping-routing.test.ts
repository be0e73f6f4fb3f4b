/**
 * Emissary Mappings, as a resource (v3alpha1) and in the annotation (v2),
 * through the gateway to a real upstream: which Mapping wins, the path,
 * Host and headers the upstream gets, and the redirect a client gets.
 */
import assert from 'node:assert/strict';
import { emissaryRig, FORMS, routeTo, written, type EmissaryRig, type Form } from '../../../support/emissary';

/** The Mappings of the tests, each field in the spelling of `form`'s apiVersion. */
function mappings(form: Form, up: string) {
  const v2 = form === 'annotation';
  return [
    routeTo(up, 'garden', { prefix: '/garden/' }),
    routeTo(up, 'garden-tools', { prefix: '/garden/tools/', rewrite: '' }),
    routeTo(up, 'garden-gold', { prefix: '/garden/', precedence: 5, headers: { 'x-tier': 'gold' } }),
    routeTo(up, 'orders-post', { prefix: '/orders/', method: 'POST' }),
    routeTo(up, 'orders', { prefix: '/orders/' }),
    // One long header outweighs two short ones, as Emissary weighs them: by length, not count.
    routeTo(
      up,
      'shelf-two',
      v2
        ? { prefix: '/shelf/', headers: { 'x-a': true, 'x-b': true } }
        : { prefix: '/shelf/', headers: { 'x-a': 'y', 'x-b': 'y' } },
    ),
    routeTo(up, 'shelf-long', { prefix: '/shelf/', headers: { 'x-warehouse': 'north-east-annex' } }),
    // "Any value": v2 writes true; v3alpha1 keeps the name in v2BoolHeaders beside the pattern .*
    routeTo(
      up,
      'beta',
      v2
        ? { prefix: '/beta/', headers: { 'x-beta': true } }
        : { prefix: '/beta/', v2BoolHeaders: ['x-beta'], regex_headers: { 'x-beta': '.*' } },
    ),
    routeTo(up, 'agents', { prefix: '/agents/', regex_headers: { 'user-agent': 'curl/[0-9.]+' } }),
    routeTo(up, 'search', { prefix: '/search/', regex_query_parameters: { page: '[0-9]+' } }),
    routeTo(
      up,
      'tenant',
      v2 ? { prefix: '/tenant/', host: '*.tenant.example' } : { prefix: '/tenant/', hostname: '*.tenant.example' },
    ),
    routeTo(up, 'files', { prefix: '/files/[0-9]+', prefix_regex: true, rewrite: '' }),
    routeTo(up, 'status', { prefix: '/status', prefix_exact: true, rewrite: '/health' }),
    routeTo(up, 'legacy', {
      prefix: '/legacy/',
      regex_rewrite: { pattern: '^/legacy/(.*)$', substitution: '/v2/\\1' },
    }),
    routeTo(up, 'docs', { prefix: '/docs/', case_sensitive: false, rewrite: '' }),
    routeTo(up, 'edit', {
      prefix: '/edit/',
      add_request_headers: {
        'x-env': 'prod',
        'x-mode': v2 ? { value: 'strict', append: false } : { value: 'strict', append: false, v2Representation: '' },
      },
      remove_request_headers: v2 ? 'x-debug' : ['x-debug'],
      add_response_headers: { 'x-served-by': 'gatehouse' },
    }),
    routeTo(up, 'vhost', { prefix: '/vhost/', host_rewrite: 'internal.example' }),
    {
      kind: 'Mapping',
      name: 'moved',
      spec: {
        prefix: '/moved/',
        service: 'new.example',
        host_redirect: true,
        path_redirect: '/landing',
        redirect_response_code: 302,
      },
    },
  ];
}

for (const form of FORMS) {
  describe(`Emissary Mappings routed, written as ${form === 'resource' ? 'v3alpha1 resources' : 'v2 records of the annotation'}`, () => {
    let rig: EmissaryRig;
    before(async () => {
      rig = await emissaryRig((up) => written(form, ...mappings(form, up)));
    });
    after(() => rig.close());

    it('routes by precedence, then the longest prefix, replacing the prefix by the rewrite (/ by default)', async () => {
      const roses = await rig.call('/garden/roses');
      assert.deepEqual([roses.route, roses.received?.url], ['garden', '/roses']);
      const rake = await rig.call('/garden/tools/rake');
      assert.deepEqual([rake.route, rake.received?.url], ['garden-tools', '/garden/tools/rake']);
      const gold = await rig.call('/garden/tools/rake', { headers: { 'X-Tier': 'gold' } });
      assert.deepEqual([gold.route, gold.received?.url], ['garden-gold', '/tools/rake']);
    });

    it('orders Mappings of one prefix by the length of their header matchers, not their count, as Emissary does', async () => {
      const both = { 'X-A': 'y', 'X-B': 'y', 'X-Warehouse': 'north-east-annex' };
      assert.equal((await rig.call('/shelf/1', { headers: both })).route, 'shelf-long');
      assert.equal((await rig.call('/shelf/1', { headers: { 'X-A': 'y', 'X-B': 'y' } })).route, 'shelf-two');
    });

    it('routes by method, by a header present with any value, by header and query patterns, and by a hostname glob', async () => {
      assert.equal((await rig.call('/orders/7', { method: 'POST' })).route, 'orders-post');
      assert.equal((await rig.call('/orders/7')).route, 'orders');
      assert.equal((await rig.call('/beta/x', { headers: { 'X-Beta': '' } })).route, 'beta');
      assert.equal((await rig.call('/beta/x')).status, 404);
      assert.equal((await rig.call('/agents/', { headers: { 'User-Agent': 'curl/8.5.0' } })).route, 'agents');
      assert.equal((await rig.call('/agents/', { headers: { 'User-Agent': 'Mozilla/5.0' } })).status, 404);
      assert.equal((await rig.call('/search/?page=12')).route, 'search');
      assert.equal((await rig.call('/search/?page=last')).status, 404);
      assert.equal((await rig.call('/tenant/x', { headers: { Host: 'acme.tenant.example' } })).route, 'tenant');
      assert.equal((await rig.call('/tenant/x', { headers: { Host: 'tenant.example' } })).status, 404);
    });

    it('matches a prefix_regex whole, a prefix_exact alone, in any case where case_sensitive is false, and rewrites by regex_rewrite', async () => {
      assert.deepEqual([(await rig.call('/files/42')).route, (await rig.call('/files/42/x')).status], ['files', 404]);
      const status = await rig.call('/status?verbose=1');
      assert.deepEqual([status.route, status.received?.url], ['status', '/health?verbose=1']);
      assert.equal((await rig.call('/status/more')).status, 404);
      const legacy = await rig.call('/legacy/items/3');
      assert.deepEqual([legacy.route, legacy.received?.url], ['legacy', '/v2/items/3']);
      const docs = await rig.call('/DOCS/Intro');
      assert.deepEqual([docs.route, docs.received?.url], ['docs', '/DOCS/Intro']);
    });

    it('edits the headers: added (appended, or replacing with append: false), removed, and added to the response', async () => {
      const res = await rig.call('/edit/x', { headers: { 'X-Env': 'dev', 'X-Mode': 'loose', 'X-Debug': '1' } });
      assert.equal(res.route, 'edit');
      assert.deepEqual(
        [res.received?.headers['x-env'], res.received?.headers['x-mode'], res.received?.headers['x-debug']],
        ['dev, prod', 'strict', undefined],
      );
      assert.equal(res.answer.headers['x-served-by'], 'gatehouse');
    });

    it("sends the upstream its own host:port as Host, or host_rewrite's, with the client's in X-Forwarded-Host", async () => {
      const own = await rig.call('/garden/x', { headers: { Host: 'shop.example' } });
      assert.deepEqual(
        [own.received?.headers.host, own.received?.headers['x-forwarded-host']],
        [rig.upstream, 'shop.example'],
      );
      const renamed = await rig.call('/vhost/x', { headers: { Host: 'shop.example' } });
      assert.deepEqual(
        [renamed.received?.headers.host, renamed.received?.headers['x-forwarded-host']],
        ['internal.example', 'shop.example'],
      );
    });

    it('answers a host_redirect Mapping with its redirect, the query kept, calling no upstream', async () => {
      const res = await rig.call('/moved/page?x=1');
      assert.deepEqual(
        [res.status, res.answer.headers.location, res.received],
        [302, 'http://new.example/landing?x=1', undefined],
      );
    });
  });
}
