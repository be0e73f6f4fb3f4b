/**
 * A Mapping's `headers` and `regex_headers` on the request's pseudo-headers
 * (`:authority`, `:method`, `:path`, `:scheme`), through the gateway to a
 * real upstream, in the gateway's own records and in Emissary's two forms:
 * each read from what the gateway routes on, so that no spelling of a
 * request routes apart from its normal form.
 */
import assert from 'node:assert/strict';
import { configFromRecords } from '../../../src/gateway';
import { emissaryRig, FORMS, routeTo, written } from '../../support/emissary';
import { routingRig, type Rig } from '../../support/routing-rig';

/** The Mappings of the tests, as fields of either form. */
const SPECS: [string, Record<string, unknown>][] = [
  ['shop-host', { prefix: '/shop/', headers: { ':authority': 'shop.example' } }],
  ['shop', { prefix: '/shop/' }],
  ['api-versioned', { prefix: '/api/', regex_headers: { ':path': '/api/v[0-9]+/.*' } }],
  ['api', { prefix: '/api/' }],
  ['items-delete', { prefix: '/items/', headers: { ':method': 'DELETE' } }],
  ['items', { prefix: '/items/' }],
  ['secure', { prefix: '/secure/', regex_headers: { ':scheme': 'https' } }],
];

async function expectPseudoRouting(rig: Rig): Promise<void> {
  try {
    const host = (value: string) => rig.call('/shop/cart', { headers: { Host: value } });
    assert.deepEqual(
      [
        (await host('Shop.Example:8080')).route,
        (await host('shop.example.')).route,
        (await host('other.example')).route,
      ],
      ['shop-host', 'shop-host', 'shop'],
    );
    assert.deepEqual(
      [(await rig.call('/api/v2/users?all=1')).route, (await rig.call('/api/./v2//users')).route],
      ['api-versioned', 'api-versioned'],
    );
    assert.equal((await rig.call('/api/beta/users')).route, 'api');
    assert.deepEqual(
      [(await rig.call('/items/1', { method: 'DELETE' })).route, (await rig.call('/items/1')).route],
      ['items-delete', 'items'],
    );
    // A method override that would be routed apart from the method sent is refused, as for `method`.
    const overridden = await rig.call('/items/1', { method: 'POST', headers: { 'X-HTTP-Method-Override': 'DELETE' } });
    assert.deepEqual([overridden.status, overridden.route], [400, undefined]);
    assert.equal((await rig.call('/secure/x')).status, 404);
  } finally {
    await rig.close();
  }
}

describe('pseudo-headers in a Mapping’s headers and regex_headers', () => {
  it("route by the host's normal form, the normalised path with its query, the method and the scheme, in the gateway's own records", async () => {
    await expectPseudoRouting(await routingRig(() => SPECS.map(([name, spec]) => ({ name, ...spec }))));
  });

  for (const form of FORMS) {
    it(`route alike written as Emissary ${form === 'resource' ? 'resources' : 'annotation records'}`, async () => {
      await expectPseudoRouting(
        await emissaryRig((up) => written(form, ...SPECS.map(([name, spec]) => routeTo(up, name, spec)))),
      );
    });
  }

  it('refuses a name that is no pseudo-header of a request, at its field', () => {
    const result = configFromRecords([
      {
        apiVersion: 'gateway/v1',
        kind: 'Mapping',
        name: 'm',
        prefix: '/m/',
        service: 'x:80',
        headers: { ':status': '200' },
      },
      {
        apiVersion: 'gateway/v1',
        kind: 'Mapping',
        name: 'n',
        prefix: '/n/',
        service: 'x:80',
        regex_headers: { ':host': '.*' },
      },
    ]);
    assert.deepEqual(result.ok ? [] : result.problems.map((p) => p.text), [
      'Mapping m: headers.:status: is no pseudo-header of a request: :authority, :method, :path, :scheme',
      'Mapping n: regex_headers.:host: is no pseudo-header of a request: :authority, :method, :path, :scheme',
    ]);
  });
});
