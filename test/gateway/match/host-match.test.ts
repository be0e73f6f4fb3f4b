import assert from 'node:assert/strict';
import {
  formatHostPattern,
  hostMatches,
  isHostValue,
  parseHostPattern,
  type HostPattern,
} from '../../../src/gateway/match/host-match';

function pattern(text: string, globs = true): HostPattern {
  const parsed = parseHostPattern(text, globs);
  assert.ok(parsed !== null && typeof parsed === 'object', `${text}: ${JSON.stringify(parsed)}`);
  return parsed;
}

/** Why `text` is no host pattern: what the parser answers instead of one. */
function problemOf(text: string, globs: boolean): string {
  const parsed = parseHostPattern(text, globs);
  assert.equal(typeof parsed, 'string', `${text} was read as a pattern`);
  return parsed as string;
}

function matches(text: string, host: string | undefined): boolean {
  return hostMatches(pattern(text), host);
}

describe('gateway host patterns', () => {
  describe('reading', () => {
    it('reads * as any host: no constraint', () => {
      assert.equal(parseHostPattern('*', true), null);
    });

    it('reads names, globs and ports in their normal form: lower case, no trailing dot', () => {
      assert.equal(formatHostPattern(pattern('API.Example.com.')), 'api.example.com');
      assert.equal(formatHostPattern(pattern('*.Example.com')), '*.example.com');
      assert.equal(formatHostPattern(pattern('api.*')), 'api.*');
      assert.equal(formatHostPattern(pattern('api.example.com:08443')), 'api.example.com:8443');
      assert.equal(formatHostPattern(pattern('[::1]:8080')), '[::1]:8080');
      assert.equal(formatHostPattern(pattern('[0:0::1]:8080')), '[::1]:8080');
      assert.equal(formatHostPattern(pattern('127.0.0.1')), '127.0.0.1');
    });

    it('refuses the globs Envoy does not match, saying which it does', () => {
      for (const text of ['host.*.com', '*host.example.com', 'api*', '**', '*.*']) {
        assert.match(problemOf(text, true), /is no glob Envoy matches: a \* stands alone/, text);
      }
    });

    it('refuses what is no host name, and ports that are no port', () => {
      assert.match(problemOf('api example.com', true), /is not a host name \(api\.example\.com\), \*\.example\.com/);
      assert.match(problemOf('https://api.example.com', true), /is not a host name/);
      assert.match(problemOf('api.example.com:http', true), /has a port that is no number/);
      assert.match(problemOf('api.example.com:0', true), /has a port that is no number from 1 to 65535/);
      assert.match(problemOf('api.example.com:70000', true), /has a port/);
      assert.match(problemOf('api.*:8080', true), /may not name a port after a final \*/);
      assert.match(problemOf('[::1', true), /is not a host name/);
      assert.match(problemOf('[:::]', true), /is not a host name/);
    });

    it('reads host, the older field, as an exact name: a * in it is refused as Emissary refuses it', () => {
      assert.equal(formatHostPattern(pattern('api.example.com', false)), 'api.example.com');
      assert.match(problemOf('*', false), /is an exact match, and \* matches no host: write hostname: "\*"/);
      assert.match(
        problemOf('*.example.com', false),
        /is an exact match and may not hold \*: write hostname for a glob/,
      );
    });
  });

  describe('matching a Host header', () => {
    it('matches an exact name in any case, with or without a trailing dot', () => {
      assert.ok(matches('api.example.com', 'api.example.com'));
      assert.ok(matches('api.example.com', 'API.Example.COM'));
      assert.ok(matches('api.example.com', 'api.example.com.'));
      assert.ok(!matches('api.example.com', 'www.example.com'));
      assert.ok(!matches('api.example.com', 'api.example.com.evil'));
      assert.ok(!matches('api.example.com', 'xapi.example.com'));
    });

    it('ignores the port of the Host when the pattern names none, and wants it when it does', () => {
      assert.ok(matches('api.example.com', 'api.example.com:8080'));
      assert.ok(matches('api.example.com', 'api.example.com:443'));
      assert.ok(matches('api.example.com', 'api.example.com:'));
      assert.ok(matches('api.example.com:8443', 'api.example.com:8443'));
      assert.ok(matches('api.example.com:8443', 'API.example.com:08443'));
      assert.ok(!matches('api.example.com:8443', 'api.example.com'));
      assert.ok(!matches('api.example.com:8443', 'api.example.com:443'));
    });

    it('matches no Host whose port is no port', () => {
      assert.ok(!matches('api.example.com', 'api.example.com:http'));
      assert.ok(!matches('api.example.com', 'api.example.com:99999'));
      assert.ok(!matches('api.example.com', 'api.example.com:000008080'));
    });

    it('matches *.example.com on any name below example.com, not on example.com itself', () => {
      assert.ok(matches('*.example.com', 'api.example.com'));
      assert.ok(matches('*.example.com', 'a.b.example.com:8080'));
      assert.ok(matches('*.example.com', 'API.EXAMPLE.COM'));
      assert.ok(!matches('*.example.com', 'example.com'));
      assert.ok(!matches('*.example.com', '.example.com'));
      assert.ok(!matches('*.example.com', 'api.example.org'));
      assert.ok(!matches('*.example.com', 'apiexample.com'));
    });

    it('matches api.* on any name that starts with the label api', () => {
      assert.ok(matches('api.*', 'api.example.com'));
      assert.ok(matches('api.*', 'Api.internal:8080'));
      assert.ok(!matches('api.*', 'api'));
      assert.ok(!matches('api.*', 'apix.example.com'));
    });

    it('matches IPv6 literals with and without a port', () => {
      assert.ok(matches('[::1]', '[::1]:8080'));
      assert.ok(matches('[::1]', '[::1]'));
      assert.ok(matches('[::1]:8080', '[::1]:8080'));
      assert.ok(!matches('[::1]:8080', '[::1]:9090'));
      assert.ok(!matches('[::1]', '[::1'));
      assert.ok(!matches('[::1]', '[::1]x'));
    });

    it('matches an IPv6 address in any of its spellings, as Koa reads them all as one', () => {
      assert.ok(matches('[::1]', '[0:0::1]'));
      assert.ok(matches('[::1]', '[0000:0:0:0:0:0:0:1]:8080'));
      assert.ok(matches('[0::1]', '[::1]'));
      assert.ok(matches('[2001:DB8::1]', '[2001:db8:0::1]'));
      assert.ok(matches('[::ffff:10.0.0.5]', '[::ffff:a00:5]'));
      assert.ok(!matches('[::1]', '[::2]'));
      assert.ok(!matches('[::1]', '[::1%25lo]'));
    });

    it('matches no pattern when the request has no Host', () => {
      assert.ok(!matches('api.example.com', undefined));
      assert.ok(!matches('*.example.com', ''));
    });
  });

  describe('telling a Host from what is none', () => {
    it('takes host names, dotted IPv4 and bracketed IPv6 addresses, with or without a port, and an empty Host', () => {
      const hosts = [
        '',
        'api.example.com',
        'API.Example.COM.',
        'api.example.com:',
        'api.example.com:8443',
        'api.example.com:08443',
        'my_service',
        'xn--bcher-kva.example',
        '10.0.0.5',
        '10.0.0.5.:80',
        '0.0.0.0',
        '[::1]',
        '[::1]:8080',
        '[::ffff:10.0.0.5]',
        'api.2fa',
      ];
      for (const host of hosts) assert.ok(isHostValue(host), host);
    });

    it('refuses user information, paths, lists, spaces, escapes, bytes beyond ASCII, empty labels and ports that are no port', () => {
      const hosts = [
        'api.example.com:http',
        'api.example.com:99999',
        'api.example.com:000080',
        'api.example.com:1:2',
        ':80',
        'api.example.com,evil.com',
        'u@api.example.com',
        'api.example.com@evil',
        'api.example.com/x',
        'api.example.com x',
        'api%2Eexample.com',
        'api.exämple.com',
        'api..example.com',
        '.api.example.com',
        'api.example.com..',
        '.',
        '*',
        'a;b',
        '[::1',
        '[::1]x',
        '[fe80::1%eth0]',
        '[fe80::1%25eth0]',
        '[v1.x]',
        '[]',
      ];
      for (const host of hosts) assert.ok(!isHostValue(host), host);
    });

    it('refuses an IPv4 address in any spelling other than four decimal numbers, which URLs read as that address', () => {
      for (const host of [
        '167772165',
        '10.5',
        '10.0.5',
        '0xa.0.0.5',
        '10.0.0.0x5',
        '010.0.0.5',
        '10.0.0.05',
        '256.0.0.1',
        '1.2.3.4.5',
        'api.0x',
        'api.12',
      ]) {
        assert.ok(!isHostValue(host), host);
        assert.ok(!isHostValue(`${host}:80`), `${host}:80`);
      }
    });
  });
});
