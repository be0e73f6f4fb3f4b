/**
 * A Mapping's pseudo-header conditions on a request that came over HTTP/2:
 * `:scheme` is the scheme of the connection it came on (h2 over TLS, h2c in
 * cleartext), never a value the client writes, and `:authority`, `:method`
 * and `:path` read as they read over HTTP/1.1, in their normal forms.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listen, type RunningServer } from '../../../src/gatehouse';
import { createGateway, type Gateway } from '../../../src/gateway';
import { h2Connect, h2Request } from '../../support/http2-client';
import { echoModule, registry } from '../../support/modules';
import { configOf, mapping } from '../../support/records';
import { selfSignedLocalhost, type SelfSigned } from '../../support/self-signed';

describe('gateway/match: pseudo-headers of HTTP/2 requests', () => {
  let gateway: Gateway;
  let cleartext: RunningServer;
  let secure: RunningServer;
  let h2c: ClientHttp2Session;
  let h2: ClientHttp2Session;
  let files: SelfSigned;
  let dir: string;

  before(async () => {
    files = selfSignedLocalhost();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-pseudo-h2-'));
    const tls = { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
    writeFileSync(tls.cert, files.cert);
    writeFileSync(tls.key, files.key);
    gateway = createGateway({
      modules: registry(echoModule('plain'), echoModule('only-https'), echoModule('shop'), echoModule('deleting')),
      config: configOf(
        mapping('/secure/', 'only-https', { name: 'secure', regex_headers: { ':scheme': 'https' } }),
        mapping('/secure/', 'plain', { name: 'secure-plain' }),
        mapping('/shop/', 'shop', { name: 'shop-host', headers: { ':authority': 'shop.example' } }),
        mapping('/shop/', 'plain', { name: 'shop' }),
        mapping('/items/', 'deleting', { name: 'items-delete', headers: { ':method': 'DELETE' } }),
        mapping('/items/', 'plain', { name: 'items' }),
      ),
    });
    cleartext = await listen(gateway.app.callback(), { host: '127.0.0.1', port: 0 });
    secure = await listen(gateway.app.callback(), { host: '127.0.0.1', port: 0, tls });
    h2c = await h2Connect(`http://127.0.0.1:${cleartext.port}`);
    h2 = await h2Connect(`https://127.0.0.1:${secure.port}`, files.cert);
  });
  after(async () => {
    h2c?.close();
    h2?.close();
    await cleartext?.close(0);
    await secure?.close(0);
    await gateway.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The Mapping that served `path` on `session`, by what the echo module saw. */
  async function routed(session: ClientHttp2Session, path: string, headers: Record<string, string> = {}) {
    const res = await h2Request(session, path, { method: headers[':method'], headers });
    assert.equal(res.status, 200, res.text);
    return (res.json() as { mapping: string }).mapping;
  }

  it('matches :scheme https on h2 over TLS, and not on h2c', async () => {
    assert.equal(await routed(h2, '/secure/x'), 'secure');
    assert.equal(await routed(h2c, '/secure/x'), 'secure-plain');
  });

  it('never takes :scheme from the client: an h2c request that claims https is matched as http', async () => {
    assert.equal(await routed(h2c, '/secure/x', { ':scheme': 'https' }), 'secure-plain');
    assert.equal(await routed(h2c, '/secure/x', { 'x-forwarded-proto': 'https' }), 'secure-plain');
  });

  it('matches :authority in its normal form, over h2c and over TLS', async () => {
    for (const session of [h2c, h2]) {
      assert.equal(await routed(session, '/shop/cart', { ':authority': 'Shop.Example:8443' }), 'shop-host');
      assert.equal(await routed(session, '/shop/cart', { ':authority': 'shop.example.' }), 'shop-host');
      assert.equal(await routed(session, '/shop/cart', { ':authority': 'other.example' }), 'shop');
    }
  });

  it('matches :method on the method sent, and refuses an override that would route elsewhere', async () => {
    assert.equal(await routed(h2c, '/items/1', { ':method': 'DELETE' }), 'items-delete');
    assert.equal(await routed(h2c, '/items/1'), 'items');
    const res = await h2Request(h2c, '/items/1', { method: 'POST', headers: { 'x-http-method-override': 'DELETE' } });
    assert.equal(res.status, 400, res.text);
  });
});
