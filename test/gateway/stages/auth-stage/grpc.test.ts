/**
 * The auth stage of an AuthService with `proto: grpc`, in the gateway's own
 * records, against a real grpc-js server of Envoy's ext_authz API and a
 * real upstream: what the check carries, and how each answer is honoured.
 */
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { createAuthStage } from '../../../../src/gateway/stages/auth-stage';
import { configFromRecords } from '../../../../src/gateway';
import { selfSignedLocalhost } from '../../../support/self-signed';
import { allowAlice, startExtAuthzServer, type ExtAuthzServer } from '../../../support/ext-authz-server';
import { configOf, mapping } from '../../../support/records';
import { configRig, type Rig } from '../../../support/routing-rig';
import { memoryLogger } from '../../../support/memory-logger';
import { freePort } from '../../../support/ports';

const authRecord = (address: string, fields: Record<string, unknown> = {}) => ({
  apiVersion: 'gateway/v1',
  kind: 'AuthService',
  name: 'ext-authz',
  auth_service: address,
  proto: 'grpc',
  ...fields,
});

/** A gateway whose auth stage asks `address`, in front of a recording upstream. */
function rigFor(
  address: string,
  fields: Record<string, unknown> = {},
  credentials?: grpc.ChannelCredentials,
): Promise<Rig> {
  return configRig(
    (up) =>
      configOf(
        mapping('/orders/', up, {
          add_request_headers: { 'X-Route': 'orders' },
          auth_context_extensions: { team: 'shop', tier: 'gold' },
        }),
        mapping('/open/', up, { bypass_auth: true, add_request_headers: { 'X-Route': 'open' } }),
        authRecord(address, fields),
      ),
    {
      stages: { auth: (record, modules) => createAuthStage(record, modules, { logger: memoryLogger(), credentials }) },
    },
  );
}

describe('the auth stage, checking with a gRPC ext_authz service', () => {
  let authz: ExtAuthzServer;
  let rig: Rig;

  before(async () => {
    authz = await startExtAuthzServer();
    rig = await rigFor(authz.address, { timeout_ms: 2000 });
  });
  beforeEach(() => {
    authz.received.length = 0;
    authz.answer = allowAlice;
  });
  after(async () => {
    await rig?.close();
    await authz?.close();
  });

  it('fills the check as Envoy does: method, path with query, host, scheme, headers, protocol, size, source and context extensions', async () => {
    await rig.call('/orders/7?full=1', {
      method: 'POST',
      headers: { 'X-Tenant': 'acme', 'Content-Length': '0', 'X-Travel-User': 'mallory' },
    });
    const { attributes } = authz.received[0];
    const http = attributes.request.http;
    assert.deepEqual(
      [http.method, http.path, http.host, http.scheme, http.protocol, http.size, http.query],
      ['POST', '/orders/7?full=1', rig.url.slice('http://'.length), 'http', 'HTTP/1.1', '0', ''],
    );
    assert.deepEqual(
      [
        http.headers['x-tenant'],
        http.headers[':method'],
        http.headers[':path'],
        http.headers[':authority'],
        http.headers['x-travel-user'],
      ],
      ['acme', 'POST', '/orders/7?full=1', http.host, undefined],
    );
    assert.equal(attributes.source.address.socket_address.address, '127.0.0.1');
    assert.ok(attributes.source.address.socket_address.port_value > 0);
    assert.equal(attributes.destination.address.socket_address.port_value, Number(new URL(rig.url).port));
    assert.deepEqual(attributes.context_extensions, { team: 'shop', tier: 'gold' });
    assert.ok(attributes.request.time !== null && Number(attributes.request.time.seconds) > 0);
  });

  it("lets the request on with the OK's header edits: set, appended, removed, and the user it names", async () => {
    authz.answer = () => ({
      status: { code: 0 },
      ok_response: {
        headers: [
          { header: { key: 'x-travel-user', value: 'alice' } },
          { header: { key: 'X-Tenant', value: 'checked' } },
          { header: { key: 'x-tags', value: 'b' }, append: { value: true } },
        ],
        headers_to_remove: ['x-secret'],
      },
    });
    const res = await rig.call('/orders/1', {
      headers: { 'X-Tenant': 'acme', 'X-Tags': 'a', 'X-Secret': 's', 'X-Travel-User': 'mallory' },
    });
    assert.equal(res.route, 'orders');
    const h = res.received!.headers;
    assert.deepEqual(
      [h['x-travel-user'], h['x-tenant'], h['x-tags'], h['x-secret']],
      ['alice', 'checked', 'a,b', undefined],
    );
  });

  it('keeps Host, the pseudo-headers and the framing out of reach of the answer, and no user is named unless the answer names one', async () => {
    authz.answer = () => ({
      status: { code: 0 },
      ok_response: {
        headers: [
          { header: { key: 'host', value: 'evil.example' } },
          { header: { key: ':authority', value: 'evil.example' } },
          { header: { key: 'content-length', value: '999' } },
        ],
        headers_to_remove: ['host', ':path', 'content-length'],
      },
    });
    const res = await rig.call('/orders/1', { headers: { 'X-Travel-User': 'mallory' } });
    assert.equal(res.status, 200);
    assert.equal(res.received!.headers.host, rig.upstream);
    assert.equal(res.received!.headers['x-travel-user'], undefined);
    assert.equal(res.received!.url, '/1');
  });

  it("sets and removes query parameters, and adds the answer's response headers to the upstream's answer", async () => {
    authz.answer = () => ({
      status: { code: 0 },
      ok_response: {
        query_parameters_to_set: [{ key: 'tenant', value: 'acme' }],
        query_parameters_to_remove: ['token'],
        response_headers_to_add: [
          { header: { key: 'x-checked-by', value: 'authz' } },
          { header: { key: 'content-type', value: 'text/x-authz' } },
          { header: { key: 'x-extra', value: 'two' }, append: { value: true } },
        ],
      },
    });
    const res = await rig.call('/orders/1?token=abc&keep=1');
    assert.equal(res.received!.url, '/1?keep=1&tenant=acme');
    assert.deepEqual(
      [res.answer.headers['x-checked-by'], res.answer.headers['content-type'], res.answer.text],
      ['authz', 'text/x-authz', 'ok'],
    );
  });

  it('gives the client the refusal: its status, headers and body, and never calls the upstream', async () => {
    authz.answer = () => ({
      status: { code: 7 },
      denied_response: {
        status: { code: 'Unauthorized' },
        headers: [
          { header: { key: 'www-authenticate', value: 'Bearer realm="shop"' } },
          { header: { key: 'content-type', value: 'application/json' } },
        ],
        body: '{"why":"no token"}',
      },
    });
    const res = await rig.call('/orders/1');
    assert.deepEqual(
      [
        res.status,
        res.answer.headers['www-authenticate'],
        res.answer.headers['content-type'],
        res.answer.text,
        res.received,
      ],
      [401, 'Bearer realm="shop"', 'application/json', '{"why":"no token"}', undefined],
    );
  });

  it('gives the client a refusal of status 200 or 5xx too, which only a gRPC service can answer, as Emissary documents', async () => {
    for (const [code, status] of [
      ['OK', 200],
      ['ServiceUnavailable', 503],
    ] as const) {
      authz.answer = () => ({ status: { code: 7 }, denied_response: { status: { code }, body: `answered ${status}` } });
      const res = await rig.call('/orders/1');
      assert.deepEqual([res.status, res.answer.text, res.received], [status, `answered ${status}`, undefined]);
    }
  });

  it("answers 403 with the gateway's error body for a refusal that names no status and has no body", async () => {
    authz.answer = () => ({ status: { code: 7 } });
    const res = await rig.call('/orders/1');
    assert.deepEqual([res.status, res.answer.json().code, res.received], [403, 403, undefined]);
  });

  it('asks nothing for a Mapping that bypasses auth', async () => {
    const res = await rig.call('/open/x');
    assert.deepEqual([res.route, authz.received.length], ['open', 0]);
  });

  it('sends the body with include_body, and says when it is cut', async () => {
    const bodyRig = await rigFor(authz.address, { include_body: { max_bytes: 5, allow_partial: true } });
    try {
      await bodyRig.call('/orders/1', {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain', 'Content-Length': '11' },
        body: 'hello world',
      } as never);
      const http = authz.received[0].attributes.request.http;
      assert.deepEqual([http.body, http.headers['x-envoy-auth-partial-body'], http.size], ['hello', 'true', '11']);
    } finally {
      await bodyRig.close();
    }
  });
});

describe('the auth stage, when the gRPC ext_authz service fails', () => {
  let authz: ExtAuthzServer;
  before(async () => (authz = await startExtAuthzServer()));
  after(() => authz.close());

  it('answers status_on_error (403 by default) when the service is down, and the upstream is not called', async () => {
    const down = `127.0.0.1:${await freePort()}`;
    for (const [fields, status] of [
      [{}, 403],
      [{ status_on_error: { code: 503 } }, 503],
    ] as const) {
      const rig = await rigFor(down, fields);
      try {
        const res = await rig.call('/orders/1');
        assert.deepEqual([res.status, res.received], [status, undefined]);
      } finally {
        await rig.close();
      }
    }
  });

  it('lets the request through with failure_mode_allow, and answers status_on_error for a service slower than timeout_ms', async () => {
    authz.answer = () => 'never';
    const allow = await rigFor(authz.address, { failure_mode_allow: true, timeout_ms: 50 });
    const deny = await rigFor(authz.address, { timeout_ms: 50, status_on_error: { code: 504 } });
    try {
      assert.equal((await allow.call('/orders/1')).route, 'orders');
      const refused = await deny.call('/orders/1');
      assert.deepEqual([refused.status, refused.received], [504, undefined]);
    } finally {
      await allow.close();
      await deny.close();
    }
  });

  it('treats a gRPC error of the service as a failure, not a refusal', async () => {
    authz.answer = () => ({ error: grpc.status.INTERNAL });
    const rig = await rigFor(authz.address);
    try {
      assert.equal((await rig.call('/orders/1')).status, 403);
    } finally {
      await rig.close();
    }
  });
});

describe('the auth stage, checking with a gRPC ext_authz service over TLS', () => {
  let cert: Buffer;
  let authz: ExtAuthzServer;

  before(async () => {
    const made = selfSignedLocalhost();
    cert = made.cert;
    authz = await startExtAuthzServer(made);
  });
  after(() => authz?.close());

  it('checks over TLS with tls set, trusting the authority it is given', async () => {
    const rig = await rigFor(`localhost:${authz.port}`, { tls: true }, grpc.credentials.createSsl(cert));
    try {
      const res = await rig.call('/orders/1');
      assert.deepEqual([res.status, res.received?.headers['x-travel-user']], [200, 'alice']);
    } finally {
      await rig.close();
    }
  });

  it("refuses, as the service being down, a certificate the system's authorities do not vouch for", async () => {
    const rig = await rigFor(`https://localhost:${authz.port}`);
    try {
      assert.equal((await rig.call('/orders/1')).status, 403);
    } finally {
      await rig.close();
    }
  });
});

describe('an AuthService record with proto: grpc', () => {
  it('refuses protocol_version v2 with the reason, and path_prefix, which a gRPC check does not carry', () => {
    const result = configFromRecords([authRecord('authz:9000', { protocol_version: 'v2', path_prefix: '/x' })]);
    assert.equal(result.ok, false);
    const texts = result.ok ? [] : result.problems.map((p) => p.text).join('\n');
    assert.match(String(texts), /protocol_version: must be v3 for proto: grpc/);
    assert.match(String(texts), /path_prefix: is for proto: http alone/);
  });
});
