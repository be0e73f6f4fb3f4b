/**
 * A method override (`X-HTTP-Method-Override: DELETE`, `?_method=DELETE`),
 * which Express's method-override, Symfony, Laravel and Spring obey: the
 * gateway routes by the method of the request line, the backend acts on the
 * other, so a request the two would route apart is refused.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { createGateway, type Gateway } from '../../src/gateway';
import { overriddenMethods } from '../../src/gateway/method-override';
import { close, configOf, echoModule, listen, mapping, registry, send } from './helpers';

const REFUSED = {
  code: 400,
  message: '400: Bad Request',
  detail: 'the method override of the request would route it elsewhere than its method',
};

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
    assert.equal(overriddenMethods({}, '/x?a=1'), undefined);
    assert.deepEqual(overriddenMethods({ 'x-http-method-override': 'delete' }, '/x'), ['DELETE']);
    assert.deepEqual(overriddenMethods({ 'x-http-method': 'PUT', 'x-method-override': ' patch ' }, '/x'), ['PUT', 'PATCH']);
    assert.deepEqual(overriddenMethods({ 'x-http-method-override': 'DELETE, PUT' }, '/x'), ['DELETE', 'PUT']);
    assert.deepEqual(overriddenMethods({}, '/x?a=1&_method=delete'), ['DELETE']);
    assert.deepEqual(overriddenMethods({}, '/x?_method=put&_method=DELETE'), ['PUT', 'DELETE']);
    assert.equal(overriddenMethods({}, '/x?my_method=delete'), undefined);
  });

  it('answers 400 to an override that would take the request to another Mapping', async () => {
    const asks: { path: string; headers?: Record<string, string> }[] = [
      { path: '/items/1', headers: { 'X-HTTP-Method-Override': 'DELETE' } },
      { path: '/items/1', headers: { 'X-HTTP-Method-Override': 'delete' } },
      { path: '/items/1', headers: { 'X-HTTP-Method': 'DELETE' } },
      { path: '/items/1', headers: { 'X-Method-Override': 'DELETE' } },
      { path: '/items/1', headers: { 'X-HTTP-Method-Override': 'POST, DELETE' } },
      { path: '/items/1?_method=DELETE' },
      { path: '/items/1?x=1&_method=delete' },
    ];
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
    const anywhere = await send(base, '/other/1?_method=DELETE', { method: 'POST', headers: { 'X-HTTP-Method-Override': 'PATCH' } });
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
      assert.deepEqual(Object.keys(res.json().headers).filter((h) => /method/.test(h)), [], spelling);
    }
  });

  it('routes a request without an override by its method alone', async () => {
    assert.equal((await send(base, '/items/1', { method: 'POST' })).json().module, 'public');
    assert.equal((await send(base, '/items/1', { method: 'DELETE' })).json().module, 'guarded');
  });
});
