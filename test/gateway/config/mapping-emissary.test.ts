/**
 * The Mapping fields written for Emissary: `hostname`, `host`, `host_rewrite`,
 * `case_sensitive`, `allow_upgrade`, `use_websocket`, `docs` load; every other Emissary field is refused by
 * name, saying why, with file, service, record and field.
 */
import assert from 'node:assert/strict';
import { allowedUpgrades } from '../../../src/gateway';
import { mappingFields } from '../../support/records';

const { at: AT, load, problems } = mappingFields('quote', 'quote-backend', '/backend/');

describe('gateway config: Emissary Mapping fields', () => {
  it('loads the Mapping of Emissary\'s quickstart, with hostname "*" and docs', () => {
    const m = load('hostname: "*"\ndocs:\n  path: "/.ambassador-internal/openapi-docs"\n');
    assert.equal(m.hostname, '*');
    assert.deepEqual(m.docs, { path: '/.ambassador-internal/openapi-docs' });
  });

  it('reads hostname and host in their normal form, and case_sensitive true by default', () => {
    assert.equal(load('hostname: "*.Example.COM"').hostname, '*.example.com');
    assert.equal(load('hostname: api.example.com.:8443').hostname, 'api.example.com:8443');
    assert.equal(load('host: Quote.Example.com').host, 'quote.example.com');
    assert.equal(load('host: quote.example.com\nhost_regex: false').host, 'quote.example.com');
    assert.equal(load('').case_sensitive, true);
    assert.equal(load('case_sensitive: false').case_sensitive, false);
  });

  it('reads host_rewrite, and auto_host_rewrite: true, which is what the gateway does anyway', () => {
    assert.equal(load('host_rewrite: httpbin.org').host_rewrite, 'httpbin.org');
    assert.equal(load('host_rewrite: "[::1]:8080"').host_rewrite, '[::1]:8080');
    assert.equal(load('auto_host_rewrite: true').auto_host_rewrite, true);
  });

  it('refuses a hostname that is no host or a glob Envoy does not match', () => {
    assert.deepEqual(problems('hostname: "host.*.com"'), [
      `${AT} hostname: 'host.*.com' is no glob Envoy matches: a * stands alone (any host), for the first label (*.example.com) or for the last (api.*)`,
    ]);
    assert.deepEqual(problems('hostname: "api example.com"'), [
      `${AT} hostname: 'api example.com' is not a host name (api.example.com), *.example.com, api.*, or * for any host, with an optional :port`,
    ]);
    assert.deepEqual(problems('hostname: api.example.com:99999'), [
      `${AT} hostname: has a port that is no number from 1 to 65535: 'api.example.com:99999'`,
    ]);
    assert.deepEqual(problems('hostname: 7'), [`${AT} hostname: expected string, received number`]);
  });

  it('refuses a * in host, and host with hostname', () => {
    assert.deepEqual(problems('host: "*"'), [
      `${AT} host: is an exact match, and * matches no host: write hostname: "*", or leave host out, for any host`,
    ]);
    assert.deepEqual(problems('host: "*.example.com"'), [
      `${AT} host: is an exact match and may not hold *: write hostname for a glob (*.example.com, api.*)`,
    ]);
    assert.deepEqual(problems('host: a.example.com\nhostname: b.example.com'), [
      `${AT} host: give hostname or host, not both (host is the older spelling of an exact hostname)`,
    ]);
    assert.deepEqual(problems('host_regex: false'), [`${AT} host_regex: applies to host, which is not given`]);
  });

  it('refuses a host_rewrite that is no host, and contradicting Host rewrites', () => {
    assert.deepEqual(problems('host_rewrite: http://httpbin.org'), [`${AT} host_rewrite: must be host or host:port`]);
    assert.deepEqual(problems('host_rewrite: ""'), [`${AT} host_rewrite: must be host or host:port`]);
    assert.deepEqual(problems('host_rewrite: httpbin.org\nauto_host_rewrite: true'), [
      `${AT} auto_host_rewrite: give host_rewrite or auto_host_rewrite, not both`,
    ]);
    assert.deepEqual(problems('auto_host_rewrite: false'), [
      `${AT} auto_host_rewrite: must be true (or left out): a remote upstream is always sent its own host:port as Host, or host_rewrite; the client's Host goes in X-Forwarded-Host`,
    ]);
  });

  it('refuses a case_sensitive that is no boolean', () => {
    assert.deepEqual(problems('case_sensitive: "no"'), [`${AT} case_sensitive: expected boolean, received string`]);
  });

  it('reads allow_upgrade in lower case, and use_websocket: true as allow_upgrade: [websocket]', () => {
    assert.deepEqual(load('allow_upgrade: [WebSocket, spdy/3.1]').allow_upgrade, ['websocket', 'spdy/3.1']);
    assert.deepEqual(allowedUpgrades(load('allow_upgrade: [websocket]')), ['websocket']);
    assert.deepEqual(allowedUpgrades(load('use_websocket: true')), ['websocket']);
    assert.deepEqual(allowedUpgrades(load('use_websocket: false')), []);
    assert.deepEqual(allowedUpgrades(load('')), []);
  });

  it('refuses an upgrade to h2c, a protocol that is no token, and allow_upgrade with use_websocket', () => {
    assert.deepEqual(problems('allow_upgrade: [websocket, H2C]'), [
      `${AT} allow_upgrade.1: h2c is not proxied: the client's connection would become an HTTP/2 connection to the upstream, whose later requests no Mapping, auth or rate limit would see`,
    ]);
    assert.deepEqual(problems('allow_upgrade: ["web socket"]'), [
      `${AT} allow_upgrade.0: must be a protocol as the Upgrade header names it (websocket)`,
    ]);
    assert.deepEqual(problems('allow_upgrade: websocket'), [`${AT} allow_upgrade: expected array, received string`]);
    assert.deepEqual(problems('allow_upgrade: [websocket]\nuse_websocket: true'), [
      `${AT} use_websocket: give allow_upgrade or use_websocket, not both (use_websocket: true is allow_upgrade: [websocket])`,
    ]);
  });

  it('refuses the other Emissary fields by name, each with what to do instead', () => {
    const cases: [string, string][] = [
      [
        'grpc: true\nallow_upgrade: [websocket]',
        'grpc: a gRPC call is no connection upgrade: give grpc or allow_upgrade (use_websocket), not both',
      ],
      ['grpc: "yes"', 'grpc: expected boolean, received string'],
      ['tls: true', 'tls: must name a TLSContext; for TLS without one, write the service as https://host:port'],
      [
        'shadow: true',
        'shadow: an Emissary field not supported here: a Mapping forwards to one upstream, as it is written; remove the field',
      ],
      [
        'outlier_detection: "{}"',
        "outlier_detection: an Emissary field not supported here: failing endpoints are ejected as Envoy's outlier detection does by default; remove the field",
      ],
    ];
    for (const [field, message] of cases) assert.deepEqual(problems(field), [`${AT} ${message}`], field);
  });

  it('still says "unknown field" of a field Emissary does not have either, and of a key docs does not have', () => {
    assert.deepEqual(problems('hostnmae: api.example.com'), [`${AT} hostnmae: unknown field`]);
    assert.deepEqual(problems('docs: {path: /x, swagger: true}'), [`${AT} docs.swagger: unknown field`]);
  });
});
