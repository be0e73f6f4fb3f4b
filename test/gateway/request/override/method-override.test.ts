/**
 * A method override (`X-HTTP-Method-Override: DELETE`, `?_method=DELETE`),
 * which Express's method-override, Symfony, Laravel and Spring obey: the
 * gateway routes by the method of the request line, the backend acts on the
 * other, so a request the two would route apart is refused.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { overriddenMethods } from '../../../../src/gateway/request/override/method-override';
import { basic } from '../../../support/credentials';
import { close, listen } from '../../../support/server';
import { configOf, mapping } from '../../../support/records';
import { echoModule, registry } from '../../../support/modules';
import { send, sendRaw } from '../../../support/client';
import { overrideRig, REFUSED } from '../../../support/override-rig';
import { REROUTING_OVERRIDES } from '../../../support/hostile-requests';

describe('method overrides', () => {
  let gateway: Gateway;
  let server: Server;
  let base = '';

  before(async () => {
    gateway = createGateway({
      modules: registry(echoModule('public'), echoModule('guarded'), echoModule('any')),
      config: configOf(
        mapping('/items/', 'public', { name: 'public', rewrite: '', method: 'POST' }),
        mapping('/items/', 'guarded', { name: 'guarded', rewrite: '' }),
        mapping('/api/admin/', 'guarded', { name: 'admin-delete', rewrite: '', method: 'DELETE' }),
        mapping('/', 'any', { name: 'any', rewrite: '' }),
      ),
    });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });
  after(async () => {
    await close(server);
    await gateway.close();
  });

  it('reads the methods a request may be overridden to, upper case, none in the usual case', () => {
    assert.equal(overriddenMethods({}, 'a=1'), undefined);
    assert.deepEqual(overriddenMethods({ 'x-http-method-override': 'delete' }, ''), ['DELETE']);
    assert.deepEqual(overriddenMethods({ 'x-http-method': 'PUT', 'x-method-override': ' patch ' }, ''), [
      'PUT',
      'PATCH',
    ]);
    assert.deepEqual(overriddenMethods({ 'x-http-method-override': 'DELETE, PUT' }, ''), ['DELETE', 'PUT']);
    assert.deepEqual(overriddenMethods({}, 'a=1&_method=delete'), ['DELETE']);
    assert.deepEqual(overriddenMethods({}, '_method=put&_method=DELETE'), ['PUT', 'DELETE']);
    assert.equal(overriddenMethods({}, 'my_method=delete'), undefined);
  });

  it('reads the names of the query decoded, in any case, as PHP and Rack mangle them, with ; as a separator', () => {
    const named: [string, string[]][] = [
      ['%5fmethod=DELETE', ['DELETE']],
      ['_%6Dethod=delete', ['DELETE']],
      ['%5F%6D%65%74%68%6F%64=PUT', ['PUT']],
      ['.method=DELETE', ['DELETE']],
      ['+_method=DELETE', ['DELETE']],
      ['_method[]=DELETE', ['DELETE']],
      ['_method%00=DELETE', ['DELETE']],
      ['_method%00x=DELETE', ['DELETE']],
      ['_method%5B0%5D=DELETE', ['DELETE']],
      ['[_method]=DELETE', ['DELETE']],
      // Rack 2 drops the brackets at a name's start and those that close it.
      ['[]_method=DELETE', ['DELETE']],
      ['[_method=DELETE', ['DELETE']],
      [']_method=DELETE', ['DELETE']],
      ['_method]=DELETE', ['DELETE']],
      ['%5D%5D_method%5D=DELETE', ['DELETE']],
      ['_METHOD=DELETE', ['DELETE']],
      ['a=1;_method=DELETE', ['DELETE']],
      [
        'X-HTTP-Method-Override=DELETE&x-http-method=PUT&X-Method-Override=PATCH&x-tunneled-method=GET',
        ['DELETE', 'PUT', 'PATCH', 'GET'],
      ],
      ['X-HTTP-Method-Overr%C4%B1de=DELETE', ['DELETE']],
      ['_method=%20delete+', ['DELETE']],
      ['_method=POST,DELETE', ['POST', 'DELETE']],
    ];
    for (const [query, methods] of named) assert.deepEqual(overriddenMethods({}, query), methods, query);
  });

  it('reads a name or value decoded twice and overlong UTF-8 as the character it spells, as lenient backends do', () => {
    assert.deepEqual(overriddenMethods({}, '%255fmethod=DELETE'), ['DELETE']);
    assert.deepEqual(overriddenMethods({}, '_method=%2544ELETE'), ['%44ELETE', 'DELETE']);
    assert.deepEqual(overriddenMethods({}, '%C1%9Fmethod=DELETE'), ['DELETE']);
    assert.deepEqual(overriddenMethods({}, '%E0%81%9Fmethod=DELETE'), ['DELETE']);
    assert.deepEqual(overriddenMethods({}, '_method=%C1%84ELETE'), ['DELETE']);
  });

  it('reads no override where no backend reads one', () => {
    // PHP drops the leading space of " method" and keeps "method"; "_method." is "_method_" there.
    for (const query of [
      '+method=DELETE',
      '_method.=DELETE',
      'a=_method',
      '%5fmethods=DELETE',
      'x%5fmethod=DELETE',
      '_method%zz=DELETE',
      '%FFmethod=DELETE',
      'a[_method]=DELETE',
    ]) {
      assert.equal(overriddenMethods({}, query), undefined, query);
    }
  });

  it('answers 400 to an override that would take the request to another Mapping', async () => {
    const asks = REROUTING_OVERRIDES;
    for (const { path, headers } of asks) {
      const res = await send(base, path, { method: 'POST', headers });
      assert.equal(res.status, 400, `${path} ${JSON.stringify(headers)}: ${res.text}`);
      assert.deepEqual(res.json(), REFUSED);
    }
  });

  it('answers 400 when the override and the ;parameters together would route the request elsewhere', async () => {
    // Tomcat reads /api;x/admin/y as /api/admin/y, and Spring a POST with _method=DELETE as a DELETE.
    const res = await send(base, '/api;x/admin/y?_method=DELETE', { method: 'POST' });
    assert.equal(res.status, 400, res.text);
  });

  it('routes an override that goes where the method goes, and passes it on', async () => {
    const same = await send(base, '/items/1', { method: 'POST', headers: { 'X-HTTP-Method-Override': 'POST' } });
    assert.equal(same.json().module, 'public');
    const anywhere = await send(base, '/other/1?_method=DELETE', {
      method: 'POST',
      headers: { 'X-HTTP-Method-Override': 'PATCH' },
    });
    assert.equal(anywhere.status, 200);
    assert.equal(anywhere.json().module, 'any');
    assert.equal(anywhere.json().headers['x-http-method-override'], 'PATCH');
    assert.equal(anywhere.json().query, '_method=DELETE');
  });

  it('lets no lookalike spelling of an override header through, which PHP and CGI backends read as the header', async () => {
    for (const spelling of ['X_HTTP_Method_Override', 'X.HTTP.Method', 'x_method_override']) {
      const res = await send(base, '/items/1', { method: 'POST', headers: { [spelling]: 'DELETE' } });
      assert.equal(res.status, 200, spelling);
      assert.equal(res.json().module, 'public');
      assert.deepEqual(
        Object.keys(res.json().headers).filter((h) => /method/.test(h)),
        [],
        spelling,
      );
    }
  });

  it('routes a request without an override by its method alone', async () => {
    assert.equal((await send(base, '/items/1', { method: 'POST' })).json().module, 'public');
    assert.equal((await send(base, '/items/1', { method: 'DELETE' })).json().module, 'guarded');
  });
});

describe('method overrides in the query, spelt as backends decode them', () => {
  const rig = overrideRig();

  const spellings = [
    '%5fmethod=DELETE',
    '%5Fmethod=DELETE',
    '_%6dethod=DELETE',
    '%5F%6D%65%74%68%6F%64=DELETE',
    'a=1&%5fmethod=DELETE',
    '%5fmethod=GET',
    '.method=DELETE',
    '+_method=DELETE',
    '%20_method=DELETE',
    '_method[]=DELETE',
    '_method%5B%5D=DELETE',
    '_method%00=DELETE',
    '_method%00.php=DELETE',
    '[_method]=DELETE',
    'a=1;_method=DELETE',
    '_method=POST&%5fmethod=DELETE',
    '_method=+delete',
    'X-HTTP-Method-Override=DELETE',
    'x-tunneled-method=DELETE',
    '%255fmethod=DELETE',
    '_method=%2544ELETE',
    '%C1%9Fmethod=DELETE',
  ];
  for (const query of spellings) {
    it(`answers 400 to POST /m/x?${query} on a Mapping for POST without auth, and the backend sees nothing`, async () => {
      const seen = rig.backend.received.length;
      const res = await send(rig.base, `/m/x?${query}`, { method: 'POST' });
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.json(), REFUSED);
      assert.equal(rig.backend.received.length, seen);
    });
  }

  it('passes a POST whose query names no override to its Mapping, with no user named', async () => {
    for (const query of ['a=1', '_methods=DELETE', 'a=%5fmethod', '+method=DELETE', '_method=POST', '%5fmethod=post']) {
      const res = await send(rig.base, `/m/x?${query}`, { method: 'POST', headers: { 'X-Travel-User': 'alice' } });
      assert.equal(res.status, 200, `${query}: ${res.text}`);
      const got = rig.backend.received.at(-1)!;
      assert.equal(got.url, `/m/x?${query}`);
      assert.equal(got.method, 'POST');
      assert.equal(got.headers['x-travel-user'], undefined);
    }
  });

  it('reads the query as it is forwarded: what follows a # reaches no backend', async () => {
    const res = await sendRaw(rig.port, 'POST /m/x?a=1#&_method=DELETE HTTP/1.1\r\nHost: gw.test\r\nContent-Length: 0');
    assert.equal(res.status, 200, res.text);
    assert.equal(rig.backend.received.at(-1)!.url, '/m/x?a=1');
  });

  it('routes a DELETE itself through auth', async () => {
    const seen = rig.backend.received.length;
    assert.equal((await send(rig.base, '/m/x', { method: 'DELETE' })).status, 401);
    assert.equal(rig.backend.received.length, seen);
    const res = await send(rig.base, '/m/x', {
      method: 'DELETE',
      headers: { Authorization: basic('alice', 'wonderland') },
    });
    assert.equal(res.status, 200);
    assert.equal(rig.backend.received.at(-1)!.headers['x-travel-user'], 'alice');
  });
});
