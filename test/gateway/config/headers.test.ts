/**
 * The header fields of a Mapping as YAML spells them: what loads, as what,
 * and the one problem each wrong entry gets, with file, service, record and
 * field path.
 */
import assert from 'node:assert/strict';
import { mappingFields } from '../../support/records';

const { at: AT, load, problems } = mappingFields('echo', 'edits', '/e/');

describe('gateway config: Mapping header fields', () => {
  it('reads a plain string as a value to append, as Emissary does', () => {
    const m = load('add_request_headers:\n  X-Plain: one\nadd_response_headers:\n  X-Served-By: gatehouse\n');
    assert.deepEqual(m.add_request_headers, { 'x-plain': { value: 'one', append: true } });
    assert.deepEqual(m.add_response_headers, { 'x-served-by': { value: 'gatehouse', append: true } });
  });

  it('reads {value, append} with append true by default', () => {
    const m = load('add_request_headers:\n  X-Set: {value: two, append: false}\n  X-Join: {value: three}\n');
    assert.deepEqual(m.add_request_headers, {
      'x-set': { value: 'two', append: false },
      'x-join': { value: 'three', append: true },
    });
  });

  it('reads the header lists to remove from a name or a list of names, in lower case', () => {
    const m = load('remove_request_headers: X-Secret\nremove_response_headers: [Server, X-Powered-By]\n');
    assert.deepEqual(m.remove_request_headers, ['x-secret']);
    assert.deepEqual(m.remove_response_headers, ['server', 'x-powered-by']);
    const none = load('');
    assert.deepEqual(
      [none.add_request_headers, none.remove_request_headers, none.add_response_headers, none.remove_response_headers],
      [{}, [], {}, []],
    );
  });

  it('reads headers to match as exact values, or true for any value', () => {
    assert.deepEqual(load('headers:\n  X-Version: "2"\n  X-Debug: true\n').headers, {
      'x-version': '2',
      'x-debug': true,
    });
  });

  it('refuses an added value that is neither a string, a number, a boolean nor {value, append}, naming its field', () => {
    assert.deepEqual(problems('add_request_headers:\n  X-None: null\n  X-List: [a, b]\n'), [
      `${AT} add_request_headers.X-None: must be a string or {value, append}, got null`,
      `${AT} add_request_headers.X-List: must be a string or {value, append}, got a list`,
    ]);
  });

  it('takes an unquoted number or boolean as the text it was written as, as Emissary sends it', () => {
    const m = load('add_request_headers:\n  X-Flag: true\n  X-Count: 3\n  X-Key: {value: 8412937461, append: false}\n');
    assert.deepEqual(
      [m.add_request_headers['x-flag'], m.add_request_headers['x-count'], m.add_request_headers['x-key']],
      [
        { value: 'true', append: true },
        { value: '3', append: true },
        { value: '8412937461', append: false },
      ],
    );
  });

  it("loads the Envoy variables of Emissary's examples, and refuses any other rather than send it as written", () => {
    const m = load(
      'add_request_headers:\n  X-Ip: "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%"\n  X-Proto: {value: "%PROTOCOL%"}\n  X-Pct: 50%\n',
    );
    assert.deepEqual(m.add_request_headers['x-ip'], {
      value: '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%',
      append: true,
    });
    assert.equal(m.add_request_headers['x-pct'].value, '50%');
    // %% is a literal % in Envoy: what stands between two of them is no variable.
    assert.equal(
      load('add_request_headers:\n  X-Lit: "%%START_TIME%%"\n').add_request_headers['x-lit'].value,
      '%%START_TIME%%',
    );
    const known = '%DOWNSTREAM_REMOTE_ADDRESS%, %DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%, %PROTOCOL%';
    assert.deepEqual(
      problems(
        'add_request_headers:\n  X-A: "%REQ(x-foo)%"\nadd_response_headers:\n  X-B: {value: "at %START_TIME%"}\n',
      ),
      [
        `${AT} add_request_headers.X-A: uses Envoy's %REQ(x-foo)%, which the gateway does not fill in; it knows ${known}`,
        `${AT} add_response_headers.X-B.value: uses Envoy's %START_TIME%, which the gateway does not fill in; it knows ${known}`,
      ],
    );
  });

  it('refuses an unknown key, a missing or non-string value and a non-boolean append in {value, append}', () => {
    assert.deepEqual(
      problems(
        'add_response_headers:\n  X-A: {value: a, apend: false}\n  X-B: {append: false}\n  X-C: {value: [7]}\n  X-D: {value: d, append: "no"}\n',
      ),
      [
        `${AT} add_response_headers.X-A.apend: unknown field (expected value and append)`,
        `${AT} add_response_headers.X-B.value: required (a string)`,
        `${AT} add_response_headers.X-C.value: must be a string, got a list`,
        `${AT} add_response_headers.X-D.append: must be true or false, got a string`,
      ],
    );
  });

  it('refuses header names that are no names, and values with line breaks or control characters', () => {
    assert.deepEqual(
      problems(
        'add_request_headers:\n  Bad Name: x\n  X-Split: "a\\r\\nInjected: yes"\n  X-Obj: {value: "a\\u0000b"}\nadd_response_headers:\n  X-Nul: "a\\u0000b"\n',
      ),
      [
        `${AT} add_request_headers.Bad Name: must be an HTTP header name`,
        `${AT} add_request_headers.X-Split: must be a header value: no line breaks or control characters`,
        `${AT} add_request_headers.X-Obj.value: must be a header value: no line breaks or control characters`,
        `${AT} add_response_headers.X-Nul: must be a header value: no line breaks or control characters`,
      ],
    );
  });

  it('refuses the same header twice in one field, in any case', () => {
    assert.deepEqual(problems('add_request_headers:\n  X-Twice: a\n  x-twice: b\n'), [
      `${AT} add_request_headers.x-twice: is given twice (header names are case-insensitive)`,
    ]);
  });

  it('refuses Host and pseudo-headers, as Envoy does', () => {
    const host =
      "may not be edited: the upstream is sent its own Host and X-Forwarded-Host carries the client's (Envoy refuses host edits too)";
    assert.deepEqual(
      problems(
        'add_request_headers:\n  Host: other.example\n  ":authority": other.example\nremove_request_headers: [host]\n',
      ),
      [
        `${AT} add_request_headers.Host: ${host}`,
        `${AT} add_request_headers.:authority: is a pseudo-header; it may not be edited (as in Envoy)`,
        `${AT} remove_request_headers.0: 'host' ${host}`,
      ],
    );
  });

  it('refuses hop-by-hop and framing headers in every edit', () => {
    const hop = 'is a hop-by-hop header: it describes one connection and is never passed on';
    const framing = 'describes how the body is framed; the gateway sets it from the body it sends';
    assert.deepEqual(
      problems(
        'add_request_headers:\n  Connection: close\n  Content-Length: "5"\n  Proxy-Authorization: x\n' +
          'add_response_headers:\n  Transfer-Encoding: chunked\n  Upgrade: h2c\n' +
          'remove_request_headers: [x-fine, TE]\nremove_response_headers: content-length\n',
      ),
      [
        `${AT} add_request_headers.Connection: ${hop}`,
        `${AT} add_request_headers.Content-Length: ${framing}`,
        `${AT} add_request_headers.Proxy-Authorization: ${hop}`,
        `${AT} remove_request_headers.1: 'TE' ${hop}`,
        `${AT} add_response_headers.Transfer-Encoding: ${framing}`,
        `${AT} add_response_headers.Upgrade: ${hop}`,
        `${AT} remove_response_headers: 'content-length' ${framing}`,
      ],
    );
  });

  it('lets an edit name a header that is called like a property of every object', () => {
    const m = load('add_request_headers:\n  Constructor: a\nremove_response_headers: [constructor]\n');
    assert.deepEqual(m.add_request_headers, { constructor: { value: 'a', append: true } });
    assert.deepEqual(m.remove_response_headers, ['constructor']);
  });

  it('refuses a key named __proto__ in every map of header fields, rather than losing it', () => {
    const said = problems(
      'add_request_headers:\n  __proto__: a\nadd_response_headers:\n  __proto__: b\nheaders:\n  __proto__: c\nregex_headers:\n  __proto__: d\n',
    );
    assert.deepEqual(
      [...said].sort(),
      ['add_request_headers', 'add_response_headers', 'headers', 'regex_headers'].map(
        (field) => `${AT} ${field}.__proto__: a key named __proto__ is not accepted here`,
      ),
    );
  });

  it('refuses adding X-Forwarded-* to requests, which the gateway writes, but lets them be removed', () => {
    assert.deepEqual(problems('add_request_headers:\n  X-Forwarded-For: 10.0.0.1\n'), [
      `${AT} add_request_headers.X-Forwarded-For: is set by the gateway (from the client's own with trustProxy); it may only be removed`,
    ]);
    assert.deepEqual(load('remove_request_headers: [X-Forwarded-For]\n').remove_request_headers, ['x-forwarded-for']);
  });

  it('refuses adding Forwarded to requests, which the gateway writes as it writes X-Forwarded-*, but lets it be removed', () => {
    assert.deepEqual(problems('add_request_headers:\n  Forwarded: for=10.0.0.1\n'), [
      `${AT} add_request_headers.Forwarded: is set by the gateway (from the client's own with trustProxy); it may only be removed`,
    ]);
    assert.deepEqual(load('remove_request_headers: Forwarded\n').remove_request_headers, ['forwarded']);
  });

  it('refuses removal lists that are no names', () => {
    assert.deepEqual(problems('remove_request_headers: {a: b}\nremove_response_headers: [ok, 3]\n'), [
      `${AT} remove_request_headers: must be a header name or a list of them, got a mapping`,
      `${AT} remove_response_headers.1: must be a header name, got a number`,
    ]);
  });

  it('refuses a header condition that is neither a value nor true', () => {
    assert.deepEqual(problems('headers:\n  X-Off: false\n  X-N: 2\n'), [
      `${AT} headers.X-Off: must be a string (the exact value) or true (any value), got a boolean`,
      `${AT} headers.X-N: must be a string (the exact value) or true (any value), got a number`,
    ]);
  });
});
