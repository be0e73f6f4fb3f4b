/**
 * The Module's `ip_allow` / `ip_deny`, through the gateway to a real
 * upstream: by the peer's address and by the client's (behind a trusted
 * proxy, the one it names), held before auth; in the gateway's own Module
 * and in Emissary's two forms.
 */
import assert from 'node:assert/strict';
import { configFromRecords } from '../../../src/gateway';
import { configOf, mapping } from '../../support/records';
import { configRig, type Rig } from '../../support/routing-rig';
import { emissaryRig, FORMS, written } from '../../support/emissary';
import { freePort } from '../../support/ports';

const moduleRecord = (config: Record<string, unknown>) => ({
  apiVersion: 'gateway/v1',
  kind: 'Module',
  name: 'ambassador',
  config,
});

async function rigWith(config: Record<string, unknown>, extra: unknown[] = [], trustProxy = false): Promise<Rig> {
  return configRig(
    (up) =>
      configOf(mapping('/shop/', up, { add_request_headers: { 'X-Route': 'shop' } }), moduleRecord(config), ...extra),
    { trustProxy },
  );
}

async function statusOf(rig: Rig, headers: Record<string, string> = {}): Promise<[number, string | undefined]> {
  try {
    const res = await rig.call('/shop/x', { headers });
    return [res.status, res.status === 403 ? (res.answer.json() as { detail?: string }).detail : res.route];
  } finally {
    await rig.close();
  }
}

const REFUSED = 'requests from this address are not allowed';

describe('ip_allow and ip_deny', () => {
  it('serves a peer ip_allow names, by address or CIDR block, and refuses any other with a 403', async () => {
    assert.deepEqual(await statusOf(await rigWith({ ip_allow: [{ peer: '127.0.0.1' }] })), [200, 'shop']);
    assert.deepEqual(await statusOf(await rigWith({ ip_allow: [{ peer: '127.0.0.0/8' }, { peer: '::1' }] })), [
      200,
      'shop',
    ]);
    assert.deepEqual(await statusOf(await rigWith({ ip_allow: [{ peer: '10.0.0.0/8' }] })), [403, REFUSED]);
  });

  it('refuses a peer ip_deny names, and serves the rest', async () => {
    assert.deepEqual(await statusOf(await rigWith({ ip_deny: [{ peer: '127.0.0.1/32' }] })), [403, REFUSED]);
    assert.deepEqual(await statusOf(await rigWith({ ip_deny: [{ peer: '192.0.2.0/24' }] })), [200, 'shop']);
  });

  it("judges remote rules by the client's address: behind a trusted proxy, the one it names in X-Forwarded-For", async () => {
    const deny = { ip_deny: [{ remote: '203.0.113.0/24' }] };
    assert.deepEqual(await statusOf(await rigWith(deny, [], true), { 'X-Forwarded-For': '203.0.113.9' }), [
      403,
      REFUSED,
    ]);
    assert.deepEqual(await statusOf(await rigWith(deny, [], true), { 'X-Forwarded-For': '198.51.100.1' }), [
      200,
      'shop',
    ]);
    // Untrusted, a client's X-Forwarded-For names no one: the peer is the client.
    assert.deepEqual(await statusOf(await rigWith(deny, [], false), { 'X-Forwarded-For': '203.0.113.9' }), [
      200,
      'shop',
    ]);
  });

  it('refuses before auth: the auth service is never asked', async () => {
    const auth = {
      apiVersion: 'gateway/v1',
      kind: 'AuthService',
      name: 'auth',
      auth_service: `127.0.0.1:${await freePort()}`,
      status_on_error: 503,
    };
    assert.deepEqual(await statusOf(await rigWith({ ip_deny: [{ peer: '127.0.0.1' }] }, [auth])), [403, REFUSED]);
  });

  it('refuses both at once, a rule of neither or both kinds, and what is no address or CIDR block', () => {
    const problemsOf = (config: Record<string, unknown>) => {
      const result = configFromRecords([moduleRecord(config)]);
      return result.ok ? [] : result.problems.map((p) => p.text.replace(/^.*Module ambassador: /, ''));
    };
    assert.deepEqual(problemsOf({ ip_allow: [{ peer: '10.0.0.1' }], ip_deny: [{ peer: '10.0.0.2' }] }), [
      'config.ip_deny: give ip_allow or ip_deny, not both (as Emissary takes one)',
    ]);
    assert.deepEqual(
      problemsOf({
        ip_allow: [{}, { peer: '10.0.0.1', remote: '10.0.0.2' }, { peer: '10.0.0.300' }, { remote: '10.0.0.0/33' }],
      }),
      [
        'config.ip_allow.0: a rule is one of {peer: <address or CIDR>} or {remote: <address or CIDR>}',
        'config.ip_allow.1: a rule is one of {peer: <address or CIDR>} or {remote: <address or CIDR>}',
        'config.ip_allow.2.peer: must be an IP address or a CIDR block (10.0.0.0/8, 2001:db8::/32)',
        'config.ip_allow.3.remote: the prefix length must be a whole number from 0 to 32',
      ],
    );
  });

  for (const form of FORMS) {
    it(`is read from Emissary's ambassador Module, written as ${form === 'resource' ? 'a resource' : 'an annotation'}`, async () => {
      const text = (allowed: string) => (up: string) =>
        written(
          form,
          { kind: 'Module', name: 'ambassador', spec: { config: { ip_allow: [{ peer: allowed }] } } },
          {
            kind: 'Mapping',
            name: 'shop',
            spec: { prefix: '/shop/', service: up, add_request_headers: { 'X-Route': 'shop' } },
          },
        );
      assert.deepEqual(await statusOf(await emissaryRig(text('127.0.0.1'))), [200, 'shop']);
      assert.deepEqual(await statusOf(await emissaryRig(text('10.1.0.0/16'))), [403, REFUSED]);
    });
  }
});
