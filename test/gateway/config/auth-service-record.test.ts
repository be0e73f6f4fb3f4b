import assert from 'node:assert/strict';
import { parseConfigFiles, type ConfigResult } from '../../../src/gateway';

const HEAD = 'apiVersion: gateway/v1\nkind: AuthService\nname: authentication\n';

function parse(fields: string): ConfigResult {
  return parseConfigFiles([{ file: 'config/auth.yaml', text: HEAD + fields }]);
}

function problemsOf(fields: string): string[] {
  const result = parse(fields);
  assert.equal(result.ok, false, 'the record should have been refused');
  return result.ok ? [] : result.problems.map((p) => p.text);
}

const AT = 'config/auth.yaml: AuthService authentication';

describe('an AuthService record with the fields of Emissary', () => {
  it("reads the example of Emissary's AuthService documentation", () => {
    const result = parse(`auth_service: "example-auth.authentication:3000"
tls: true
proto: http
timeout_ms: 5000
include_body:
  max_bytes: 4096
  allow_partial: true
status_on_error:
  code: 403
failure_mode_allow: false
protocol_version: v3
path_prefix: "/path"
allowed_request_headers:
- "x-example-header"
allowed_authorization_headers:
- "x-qotm-session"
add_auth_headers:
  x-added-auth: auth-added
add_linkerd_headers: false
`);
    assert.ok(result.ok, JSON.stringify(result));
    const auth = result.config.authService!;
    assert.deepEqual(auth.include_body, { max_bytes: 4096, allow_partial: true });
    assert.equal(auth.status_on_error, 403);
    assert.equal(auth.tls, true);
    assert.deepEqual(auth.add_auth_headers, { 'x-added-auth': 'auth-added' });
    assert.equal(auth.add_linkerd_headers, false);
    assert.equal(auth.protocol_version, 'v3');
  });

  it('defaults to no body, no added headers, and include_body: null says the same', () => {
    for (const extra of ['', 'include_body: null\n']) {
      const result = parse(`auth_service: auth\n${extra}`);
      assert.ok(result.ok, JSON.stringify(result));
      assert.equal(result.config.authService!.include_body, null);
      assert.equal(result.config.authService!.allow_request_body, false);
      assert.deepEqual(result.config.authService!.add_auth_headers, {});
      assert.equal(result.config.authService!.add_linkerd_headers, false);
    }
  });

  const refused: Array<[string, string, string[]]> = [
    ['a proto other than http and grpc', 'proto: websocket\n', ['proto: must be http or grpc']],
    [
      'include_body without allow_partial',
      'include_body: {max_bytes: 4096}\n',
      ['include_body.allow_partial: required (expected boolean)'],
    ],
    [
      'include_body with a max_bytes of 0',
      'include_body: {max_bytes: 0, allow_partial: true}\n',
      ['include_body.max_bytes: must be a whole number of bytes above 0'],
    ],
    [
      'include_body beside allow_request_body',
      'include_body: {max_bytes: 10, allow_partial: true}\nallow_request_body: true\n',
      ['allow_request_body: give include_body or allow_request_body, not both'],
    ],
    [
      'a TLSContext name with an http address',
      'tls: upstream-tls\n',
      ['tls: a TLSContext contradicts the http:// of auth_service'],
    ],
    ['tls: false with an https address', 'tls: false\n', ['tls: false contradicts the https:// of auth_service']],
    [
      'add_auth_headers setting Content-Length',
      'add_auth_headers: {Content-Length: "5"}\n',
      ['add_auth_headers.content-length: is set by the gateway itself'],
    ],
    [
      'add_auth_headers with a line break in a value',
      'add_auth_headers: {X-Key: "a\\nb"}\n',
      ['add_auth_headers.X-Key: must be a header value (no control characters)'],
    ],
    [
      'a status_on_error of 1xx, after which a client waits for ever',
      'status_on_error: 100\n',
      ['status_on_error: must be a final HTTP status (200 to 599): the client would wait for ever after a 1xx'],
    ],
    [
      "Emissary's {code} spelling of a 1xx status_on_error",
      'status_on_error: {code: 101}\n',
      ['status_on_error.code: must be a final HTTP status (200 to 599): the client would wait for ever after a 1xx'],
    ],
    ['a status_on_error above 599', 'status_on_error: 600\n', ['status_on_error: must be an HTTP status (200 to 599)']],
    [
      'a protocol_version Emissary does not know',
      'protocol_version: v4\n',
      ['protocol_version: Invalid option: expected one of "v2"|"v3"'],
    ],
    [
      'stats_name',
      'stats_name: auth\n',
      ['stats_name: not supported: auth decisions are counted in the Prometheus metrics; remove the field'],
    ],
    [
      'circuit_breakers of an unknown priority',
      'circuit_breakers: [{priority: urgent, max_requests: 1}]\n',
      ['circuit_breakers.0.priority: must be default or high'],
    ],
    [
      'an empty circuit_breakers',
      'circuit_breakers: []\n',
      ['circuit_breakers: must list at least one set of thresholds'],
    ],
  ];
  for (const [what, fields, expected] of refused) {
    it(`refuses ${what}, naming the file, record and field`, () => {
      const address = what.includes('https')
        ? 'https://auth.example'
        : what.includes('http address')
          ? 'http://auth.example:3000'
          : 'auth.example:3000';
      assert.deepEqual(
        problemsOf(`auth_service: ${address}\n${fields}`),
        expected.map((p) => `${AT}: ${p}`),
      );
    });
  }

  it('refuses tls: true or a TLSContext with an http:// address', () => {
    assert.deepEqual(problemsOf('auth_service: http://auth.example:3000\ntls: true\n'), [
      `${AT}: tls: true contradicts the http:// of auth_service`,
    ]);
    assert.deepEqual(problemsOf('auth_service: http://auth.example:3000\ntls: upstream-tls\n'), [
      `${AT}: tls: a TLSContext contradicts the http:// of auth_service`,
    ]);
  });
});
