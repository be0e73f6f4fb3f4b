/**
 * Emissary's matching fields through the gateway to a real upstream:
 * `prefix_regex`, `prefix_exact`, `method_regex`, `regex_headers`, `host`
 * with `host_regex`, `query_parameters`, `regex_query_parameters` and
 * `regex_rewrite`: which Mapping wins, and the path the upstream gets.
 */
import assert from 'node:assert/strict';
import { basic } from '../../support/credentials';
import { ADA, guardedRig, routingRig, type Rig } from '../../support/routing-rig';

describe('gateway Mappings by path pattern and exact path', () => {
  let rig: Rig;

  before(async () => {
    rig = await routingRig(() => [
      { name: 'catalog', prefix: '/(en|fr)/catalog/[a-z-]+', prefix_regex: true, rewrite: '' },
      { name: 'catalog-home', prefix: '/(en|fr)/catalog/?', prefix_regex: true },
      { name: 'any-case', prefix: '(?i)/press/[a-z]+', prefix_regex: true, rewrite: '' },
      { name: 'health', prefix: '/healthz', prefix_exact: true, rewrite: '/status' },
      { name: 'health-tree', prefix: '/healthz/', rewrite: '' },
      { name: 'fallback', prefix: '/', rewrite: '' },
    ]);
  });
  after(() => rig.close());

  it('routes a path its prefix_regex matches whole, and not one it matches only in part', async () => {
    const hit = await rig.call('/en/catalog/garden-tools');
    assert.deepEqual([hit.route, hit.url], ['catalog', '/en/catalog/garden-tools']);
    assert.equal(hit.received?.headers.host, rig.upstream);
    for (const path of ['/de/catalog/lamps', '/shop/en/catalog/lamps', '/en/catalog/lamps/blue']) {
      assert.equal((await rig.call(path)).route, 'fallback', path);
    }
  });

  it('forwards the rewrite in place of the whole path a prefix_regex matched, as Envoy does, with the query', async () => {
    const home = await rig.call('/fr/catalog?page=2');
    assert.deepEqual([home.route, home.url], ['catalog-home', '/?page=2']);
  });

  it('holds the pattern against the normalised path, so that no spelling of a path reaches it otherwise', async () => {
    for (const path of [
      '/en/./catalog/%67arden-tools',
      '//en//catalog/garden-tools',
      '/fr/x/../catalog/garden-tools',
    ]) {
      const res = await rig.call(path);
      assert.deepEqual(
        [res.route, res.url],
        ['catalog', path.startsWith('/fr') ? '/fr/catalog/garden-tools' : '/en/catalog/garden-tools'],
        path,
      );
    }
  });

  it('matches a pattern that starts with (?i) in any case, and others only as written', async () => {
    assert.equal((await rig.call('/PRESS/Releases')).route, 'any-case');
    assert.equal((await rig.call('/EN/catalog/lamps')).route, 'fallback');
  });

  it('routes only the path itself to a prefix_exact Mapping, with its rewrite', async () => {
    const exact = await rig.call('/healthz?verbose=1');
    assert.deepEqual([exact.route, exact.url], ['health', '/status?verbose=1']);
    assert.equal((await rig.call('/healthz/live')).route, 'health-tree');
    assert.equal((await rig.call('/healthz/')).route, 'health-tree');
    assert.equal((await rig.call('/healthzz')).route, 'fallback');
  });
});

describe('gateway Mappings by path pattern, behind auth', () => {
  let rig: Rig;

  before(async () => {
    rig = await guardedRig(() => [
      // A pattern is ordered by its length, as in Emissary: the prefix needs precedence to come first.
      { name: 'internal-docs', prefix: '/docs/internal/', precedence: 1 },
      { name: 'public-pages', prefix: '(?i)/(docs|blog)/.*', prefix_regex: true, bypass_auth: true, rewrite: '' },
    ]);
  });
  after(() => rig.close());

  it('lets a pattern that bypasses auth take its own paths, and asks for credentials on the prefix that needs them', async () => {
    const open = await rig.call('/blog/launch');
    assert.deepEqual([open.status, open.route], [200, 'public-pages']);
    assert.equal((await rig.call('/docs/internal/roadmap')).status, 401);
    const signedIn = await rig.call('/docs/internal/roadmap', {
      headers: { Authorization: basic(ADA.user, ADA.password) },
    });
    assert.deepEqual([signedIn.status, signedIn.route], [200, 'internal-docs']);
  });

  it('reaches the protected prefix, never the pattern, from any spelling of its paths', async () => {
    for (const path of [
      '/docs/../docs/internal/roadmap',
      '/docs/%69nternal/roadmap',
      '/blog/%2e%2e/docs/internal/roadmap',
      '/docs//internal/roadmap',
    ]) {
      const res = await rig.call(path);
      assert.equal(res.status, 401, path);
      assert.equal(res.route, undefined, path);
    }
  });

  it('takes a path a case-insensitive pattern matches to a route before it that matches it in another case', async () => {
    for (const path of ['/DOCS/Internal/roadmap', '/Docs/INTERNAL/roadmap']) {
      const res = await rig.call(path);
      assert.equal(res.status, 401, path);
      assert.equal(res.route, undefined, path);
    }
  });
});

describe('gateway Mappings by method pattern and header patterns', () => {
  let rig: Rig;

  before(async () => {
    rig = await routingRig(() => [
      { name: 'reads', prefix: '/orders/', method: 'GET|HEAD', method_regex: true },
      { name: 'writes', prefix: '/orders/', method: 'post' },
      { name: 'orders', prefix: '/orders/' },
      { name: 'phones', prefix: '/shop/', regex_headers: { 'User-Agent': '.*\\b(Android|iPhone)\\b.*' } },
      { name: 'shop', prefix: '/shop/' },
      { name: 'probe', prefix: '/probe/', regex_headers: { 'X-Probe': '(a+)+$' } },
    ]);
  });
  after(() => rig.close());

  it('routes the methods a method pattern matches whole to its Mapping', async () => {
    assert.equal((await rig.call('/orders/7')).route, 'reads');
    assert.equal((await rig.call('/orders/7', { method: 'HEAD' })).route, 'reads');
    assert.equal((await rig.call('/orders/7', { method: 'POST' })).route, 'writes');
    assert.equal((await rig.call('/orders/7', { method: 'DELETE' })).route, 'orders');
  });

  it('routes a request whose header value a pattern matches whole, and not one without the header', async () => {
    assert.equal(
      (await rig.call('/shop/x', { headers: { 'User-Agent': 'Mozilla/5.0 (Linux; Android 14)' } })).route,
      'phones',
    );
    assert.equal(
      (await rig.call('/shop/x', { headers: { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64)' } })).route,
      'shop',
    );
    assert.equal((await rig.call('/shop/x')).route, 'shop');
  });

  it('answers a request whose header would take a backtracking engine for ever', async () => {
    const res = await rig.call('/probe/x', { headers: { 'X-Probe': `${'a'.repeat(7000)}!` } });
    assert.equal(res.status, 404);
    assert.equal((await rig.call('/probe/x', { headers: { 'X-Probe': 'aaaa' } })).route, 'probe');
  });
});

describe('gateway Mappings by host pattern', () => {
  let rig: Rig;

  before(async () => {
    rig = await routingRig(() => [
      { name: 'regional', prefix: '/', host: '(eu|us)-[0-9]+\\.shop\\.example', host_regex: true },
      { name: 'loopback', prefix: '/', host: '\\[::1\\]', host_regex: true },
      { name: 'default', prefix: '/' },
    ]);
  });
  after(() => rig.close());

  it('routes a Host the pattern matches whole, in the normal form other hosts are matched in', async () => {
    for (const host of ['eu-3.shop.example', 'US-12.Shop.Example:8443', 'eu-3.shop.example.']) {
      assert.equal((await rig.call('/x', { headers: { Host: host } })).route, 'regional', host);
    }
    for (const host of ['ap-1.shop.example', 'eu-3.shop.example.evil.test', 'xeu-3.shop.example']) {
      assert.equal((await rig.call('/x', { headers: { Host: host } })).route, 'default', host);
    }
    for (const host of ['[::1]', '[0:0::1]:8080', '[0000:0:0:0:0:0:0:1]']) {
      assert.equal((await rig.call('/x', { headers: { Host: host } })).route, 'loopback', host);
    }
  });
});

describe('gateway Mappings by query arguments', () => {
  let rig: Rig;

  before(async () => {
    rig = await routingRig(() => [
      { name: 'preview', prefix: '/articles/', query_parameters: { preview: 'yes' } },
      { name: 'drafts', prefix: '/articles/', query_parameters: { draft: true } },
      { name: 'tagged', prefix: '/articles/', query_parameters: { tag: 'new arrivals' } },
      { name: 'paged', prefix: '/articles/', regex_query_parameters: { page: '[0-9]+' } },
      { name: 'articles', prefix: '/articles/' },
      { name: 'admins', prefix: '/roles/', query_parameters: { user_role: 'admin' } },
      { name: 'roles', prefix: '/roles/' },
    ]);
  });
  after(() => rig.close());

  it('routes a request carrying the argument with the exact value, or any value for true', async () => {
    const preview = await rig.call('/articles/1?preview=yes&x=1');
    assert.deepEqual([preview.route, preview.url], ['preview', '/1?preview=yes&x=1']);
    assert.equal((await rig.call('/articles/1?preview=no')).route, 'articles');
    assert.equal((await rig.call('/articles/1?draft')).route, 'drafts');
    assert.equal((await rig.call('/articles/1?draft=')).route, 'drafts');
    assert.equal((await rig.call('/articles/1?drafts=1')).route, 'articles');
  });

  it('routes a request whose argument a pattern matches whole', async () => {
    assert.equal((await rig.call('/articles/?page=12')).route, 'paged');
    assert.equal((await rig.call('/articles/?page=12a')).route, 'articles');
  });

  it('reads names and values decoded, as backends read them', async () => {
    assert.equal((await rig.call('/articles/1?pre%76iew=y%65s')).route, 'preview');
    assert.equal((await rig.call('/articles/1?tag=new+arrivals')).route, 'tagged');
    assert.equal((await rig.call('/articles/1?tag=new%20arrivals')).route, 'tagged');
  });

  it('answers 400 when the first and last values of an argument would route the request apart', async () => {
    const res = await rig.call('/articles/1?preview=no&preview=yes');
    assert.equal(res.status, 400);
    assert.deepEqual(res.answer.json(), {
      code: 400,
      message: '400: Bad Request',
      detail:
        'the query gives an argument twice or in a spelling some backends read otherwise, and their readings would route the request apart',
    });
    assert.equal((await rig.call('/articles/1?page=1&page=2')).route, 'paged');
    assert.equal((await rig.call('/articles/1?preview=yes&preview=yes')).route, 'preview');
  });

  it('answers 400 when a name spelled as PHP, qs, Rack, ASP.NET, Plack or a second decoding reads it would route the request apart', async () => {
    for (const query of [
      // PHP cuts a name at a NUL or a bracket, drops leading spaces and reads the last value.
      'preview=no&preview%00=yes',
      'preview=no&preview%00%zz=yes',
      'preview=no&+preview=yes',
      'preview=no&preview[]=yes',
      'preview=no&preview%5B%5D=yes',
      // qs reads [preview] as preview; Rack 2 drops the brackets at a name's start and end.
      'preview=no&[preview]=yes',
      'preview=no&[preview=yes',
      'preview=no&]preview]=yes',
      'preview=no&preview]=yes',
      // ASP.NET compares names in any case.
      'PREVIEW=yes',
      'preview=no&Preview=yes',
      // Perl's CGI and Plack split at ; too.
      'x=1;preview=yes',
      'page=3;page=4',
      // A backend that decodes twice.
      'pre%2576iew=yes',
      'preview=%2579es',
      // Present under another spelling only.
      'DRAFT',
      'draft%00x=1',
      // PHP splits at & alone and reads the last: yes, in the middle of what a split at ; too gives.
      'preview=x&+preview=yes&y=1;+preview=z',
      'preview=x&preview%00=yes&y=1;preview%00=z',
      // PHP decodes once: its last is %79es, not yes.
      'preview=yes&+preview=%2579es',
    ]) {
      const res = await rig.call(`/articles/1?${query}`);
      assert.equal(res.status, 400, query);
    }
  });

  it('answers 400 when PHP reads an unclosed [ in a name as _ (user[role is user_role)', async () => {
    for (const query of ['user[role=admin', 'user_role=x&user[role=admin', 'user%5Brole=admin']) {
      assert.equal((await rig.call(`/roles/1?${query}`)).status, 400, query);
    }
    assert.equal((await rig.call('/roles/1?user_role=admin')).route, 'admins');
    assert.equal((await rig.call('/roles/1?user[role]=admin')).route, 'roles');
  });

  it('weighs a thousand spellings of an argument by how they meet the conditions, answering at once', async () => {
    const query = Array.from({ length: 1000 }, (_, i) => `+preview=v${i}`).join('&');
    assert.equal((await rig.call(`/articles/1?preview=no&${query}`)).route, 'articles');
  });

  it('routes alike the spellings every reading agrees on', async () => {
    assert.equal((await rig.call('/articles/1?preview=yes&PREVIEW=yes')).route, 'preview');
    assert.equal((await rig.call('/articles/1?Preview=no')).route, 'articles');
    assert.equal((await rig.call('/articles/1?draft&DRAFT=1')).route, 'drafts');
    assert.equal((await rig.call('/articles/1?x=1;y=2')).route, 'articles');
    assert.equal((await rig.call('/articles/1?page=3&x=1;y=2')).route, 'paged');
  });
});

describe('gateway regex_rewrite', () => {
  let rig: Rig;

  before(async () => {
    rig = await routingRig(() => [
      {
        name: 'legacy',
        prefix: '/legacy/',
        regex_rewrite: { pattern: '^/legacy/([0-9]+)/view$', substitution: '/items/\\1' },
      },
      { name: 'swap', prefix: '/swap/', rewrite: '/ignored/', regex_rewrite: { pattern: 'one', substitution: 'two' } },
      { name: 'relative', prefix: '/rel/', regex_rewrite: { pattern: '^/rel/(.*)$', substitution: '\\1' } },
    ]);
  });
  after(() => rig.close());

  it('forwards the path with the pattern replaced by the substitution, groups filled in, the query kept', async () => {
    const res = await rig.call('/legacy/42/view?format=json');
    assert.deepEqual([res.route, res.url], ['legacy', '/items/42?format=json']);
  });

  it('replaces every match, in place of rewrite, and leaves a path it does not match as it is', async () => {
    assert.equal((await rig.call('/swap/one/and/one')).url, '/swap/two/and/two');
    assert.equal((await rig.call('/legacy/42/edit')).url, '/legacy/42/edit');
  });

  it('forwards a rewritten path without a leading slash with one', async () => {
    assert.equal((await rig.call('/rel/a/b')).url, '/a/b');
  });
});
