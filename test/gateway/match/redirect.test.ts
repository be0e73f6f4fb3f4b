/**
 * Redirect Mappings (`host_redirect: true`), answered by the gateway without
 * calling a service, as Emissary documents them: the status, and the
 * Location's scheme, host, path and query.
 */
import assert from 'node:assert/strict';
import { basic } from '../../support/credentials';
import { ADA, guardedRig, routingRig, type Rig } from '../../support/routing-rig';

const redirect = (name: string, prefix: string, service: string, fields: Record<string, unknown> = {}) => ({
  name,
  prefix,
  service,
  host_redirect: true,
  bypass_auth: true,
  ...fields,
});

describe('gateway redirects', () => {
  let rig: Rig;

  before(async () => {
    rig = await routingRig(
      () => [
        redirect('moved', '/old-blog/', 'blog.example.org', {
          add_response_headers: { 'Cache-Control': 'max-age=60' },
        }),
        redirect('help', '/help', 'support.example.org', { path_redirect: '/kb/start' }),
        redirect('search', '/find', 'support.example.org', { path_redirect: '/kb/search?lang=en' }),
        redirect('renamed', '/shop/legacy/', 'store.example.org:8443', { prefix_redirect: '/catalog/' }),
        redirect('by-id', '/items/', 'https://store.example.org', {
          regex_redirect: { pattern: '^/items/([0-9]+)$', substitution: '/products/\\1' },
        }),
        redirect('exact', '/signup', 'accounts.example.org', { prefix_exact: true, prefix_redirect: '/register' }),
        ...[302, 303, 307, 308].map((code) =>
          redirect(`code-${code}`, `/code/${code}/`, 'codes.example.org', { redirect_response_code: code }),
        ),
        { name: 'served', prefix: '/' },
      ],
      { trustProxy: true },
    );
  });
  after(() => rig.close());

  async function location(path: string, headers: Record<string, string> = {}): Promise<[number, string | undefined]> {
    const res = await rig.call(path, { headers });
    assert.equal(res.route, undefined, `${path} reached the upstream`);
    return [res.status, res.answer.headers.location];
  }

  it('answers 301 to the host service names, with the path and query as the client sent them, without calling a service', async () => {
    const before = rig.received.length;
    assert.deepEqual(await location('/old-blog/2019/notes?id=3&x=%20'), [
      301,
      'http://blog.example.org/old-blog/2019/notes?id=3&x=%20',
    ]);
    assert.equal(rig.received.length, before);
    assert.equal((await rig.call('/elsewhere')).route, 'served');
  });

  it('redirects to the normalised path', async () => {
    assert.deepEqual(await location('/old-blog/a/../b/%63'), [301, 'http://blog.example.org/old-blog/b/c']);
  });

  it("gives the redirect the route's response headers", async () => {
    const res = await rig.call('/old-blog/x');
    assert.equal(res.answer.headers['cache-control'], 'max-age=60');
  });

  it('replaces the path with path_redirect and keeps the query, unless path_redirect gives one', async () => {
    assert.deepEqual(await location('/help/faq?topic=billing'), [
      301,
      'http://support.example.org/kb/start?topic=billing',
    ]);
    assert.deepEqual(await location('/find?q=lamp'), [301, 'http://support.example.org/kb/search?lang=en']);
  });

  it('replaces the matched prefix with prefix_redirect, keeping the port service names', async () => {
    assert.deepEqual(await location('/shop/legacy/lamps?colour=red'), [
      301,
      'http://store.example.org:8443/catalog/lamps?colour=red',
    ]);
  });

  it('replaces the whole path of a prefix_exact Mapping with prefix_redirect', async () => {
    assert.deepEqual(await location('/signup'), [301, 'http://accounts.example.org/register']);
  });

  it('rewrites the path with regex_redirect, and takes the scheme service names', async () => {
    assert.deepEqual(await location('/items/42'), [301, 'https://store.example.org/products/42']);
    assert.deepEqual(await location('/items/lamp'), [301, 'https://store.example.org/items/lamp']);
  });

  it('answers each redirect_response_code', async () => {
    for (const code of [302, 303, 307, 308]) {
      assert.deepEqual(await location(`/code/${code}/x`, {}), [code, `http://codes.example.org/code/${code}/x`]);
    }
  });

  it("keeps the scheme the request came with, from a trusted proxy's X-Forwarded-Proto", async () => {
    assert.deepEqual(await location('/old-blog/x', { 'X-Forwarded-Proto': 'https' }), [
      301,
      'https://blog.example.org/old-blog/x',
    ]);
  });
});

describe('gateway redirects behind auth', () => {
  let rig: Rig;

  before(async () => {
    rig = await guardedRig(() => [
      { name: 'members', prefix: '/members/', service: 'members.example.org', host_redirect: true },
    ]);
  });
  after(() => rig.close());

  it('asks for credentials before it redirects, as Envoy runs its filters before the router answers', async () => {
    assert.equal((await rig.call('/members/x')).status, 401);
    const res = await rig.call('/members/x', { headers: { Authorization: basic(ADA.user, ADA.password) } });
    assert.deepEqual([res.status, res.answer.headers.location], [301, 'http://members.example.org/members/x']);
  });
});
