import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { configFromRecords, type MappingRecord } from '../../../src/gateway';
import { rewritePath, RouteTable } from '../../../src/gateway/match/route-table';
import { HttpError } from '../../../src/http';

let n = 0;
function mappings(...records: Record<string, unknown>[]): MappingRecord[] {
  const result = configFromRecords(
    records.map((r) => ({ apiVersion: 'gateway/v1', kind: 'Mapping', name: `r${++n}`, service: 'svc', ...r })),
  );
  assert.ok(result.ok, JSON.stringify(result));
  return result.config.mappings;
}

function table(...records: Record<string, unknown>[]): RouteTable<string> {
  return new RouteTable(mappings(...records).map((m) => ({ mapping: m, prefix: m.prefix, target: m.name })));
}

function matched(
  t: RouteTable<string>,
  path: string,
  method = 'GET',
  headers: IncomingHttpHeaders = {},
): string | undefined {
  return t.match(path, method, headers)?.target;
}

describe('gateway route table', () => {
  describe('match order', () => {
    it('prefers the longer prefix, whatever the config order', () => {
      const t = table({ prefix: '/v1/', name: 'api' }, { prefix: '/v1/hotels', name: 'hotels' });
      assert.equal(matched(t, '/v1/hotels/bookings/1'), 'hotels');
      assert.equal(matched(t, '/v1/hotels'), 'hotels');
      assert.equal(matched(t, '/v1/messages/1'), 'api');
    });

    it('lets precedence beat prefix length', () => {
      const t = table({ prefix: '/v1/hotels', name: 'hotels' }, { prefix: '/v1/', name: 'api', precedence: 10 });
      assert.equal(matched(t, '/v1/hotels/x'), 'api');
      assert.deepEqual(
        t.routes.map((r) => r.target),
        ['api', 'hotels'],
      );
    });

    it('lets a negative precedence come after shorter prefixes', () => {
      const t = table({ prefix: '/v1/hotels', name: 'hotels', precedence: -1 }, { prefix: '/', name: 'root' });
      assert.equal(matched(t, '/v1/hotels'), 'root');
    });

    it('tries a route with a method or header constraint before one without', () => {
      const t = table(
        { prefix: '/v1/', name: 'plain' },
        { prefix: '/v1/', name: 'posts', method: 'post' },
        { prefix: '/v1/', name: 'canary', headers: { 'X-Canary': 'yes' } },
        { prefix: '/v1/', name: 'canary-posts', method: 'POST', headers: { 'x-canary': 'yes' } },
      );
      assert.equal(matched(t, '/v1/x'), 'plain');
      assert.equal(matched(t, '/v1/x', 'POST'), 'posts');
      assert.equal(matched(t, '/v1/x', 'GET', { 'x-canary': 'yes' }), 'canary');
      assert.equal(matched(t, '/v1/x', 'POST', { 'x-canary': 'yes' }), 'canary-posts');
      assert.equal(matched(t, '/v1/x', 'GET', { 'x-canary': 'no' }), 'plain');
    });

    it('matches a header given as true on any value, empty included, and not on its absence', () => {
      const t = table({ prefix: '/v1/', name: 'plain' }, { prefix: '/v1/', name: 'beta', headers: { 'X-Beta': true } });
      assert.equal(matched(t, '/v1/x', 'GET', { 'x-beta': 'anything' }), 'beta');
      assert.equal(matched(t, '/v1/x', 'GET', { 'x-beta': '' }), 'beta');
      assert.equal(matched(t, '/v1/x'), 'plain');
    });

    it('skips a constrained route that does not match and finds none when nothing matches', () => {
      const t = table({ prefix: '/admin/', name: 'admin', method: 'GET', headers: { 'x-admin': '1' } });
      assert.equal(matched(t, '/admin/x', 'GET', { 'x-admin': '1' }), 'admin');
      assert.equal(matched(t, '/admin/x', 'GET'), undefined);
      assert.equal(matched(t, '/admin/x', 'DELETE', { 'x-admin': '1' }), undefined);
      assert.equal(matched(t, '/other'), undefined);
    });

    it('shares the requests of Mappings with the same match equally, as Emissary does, rather than giving them to the first', () => {
      const draws = [0.1, 0.6, 0.49, 0.5];
      const t = new RouteTable(
        mappings({ prefix: '/v1/', name: 'first' }, { prefix: '/v1/', name: 'second' }).map((m) => ({
          mapping: m,
          prefix: m.prefix,
          target: m.name,
        })),
        { random: () => draws.shift()! },
      );
      assert.deepEqual(
        [1, 2, 3, 4].map(() => matched(t, '/v1/x')),
        ['first', 'second', 'first', 'second'],
      );
    });
  });

  describe('prefixes', () => {
    it('matches a prefix without trailing slash on segment boundaries only', () => {
      const t = table({ prefix: '/v1/hotels', name: 'hotels' });
      assert.equal(matched(t, '/v1/hotels'), 'hotels');
      assert.equal(matched(t, '/v1/hotels/'), 'hotels');
      assert.equal(matched(t, '/v1/hotels/x'), 'hotels');
      assert.equal(matched(t, '/v1/hotelsX'), undefined);
      assert.equal(matched(t, '/v1/hotel'), undefined);
    });

    it('matches a prefix with trailing slash as a string prefix', () => {
      const t = table({ prefix: '/v1/hotels/', name: 'hotels' });
      assert.equal(matched(t, '/v1/hotels/'), 'hotels');
      assert.equal(matched(t, '/v1/hotels/x'), 'hotels');
      assert.equal(matched(t, '/v1/hotels'), undefined);
    });

    it('matches everything under /', () => {
      const t = table({ prefix: '/', name: 'root' });
      assert.equal(matched(t, '/'), 'root');
      assert.equal(matched(t, '/anything/at/all'), 'root');
    });
  });

  describe('hostname', () => {
    it('matches only requests whose Host the hostname names, and any Host with hostname "*"', () => {
      const t = table(
        { prefix: '/', name: 'api', hostname: 'api.example.com' },
        { prefix: '/', name: 'star', hostname: '*' },
      );
      assert.equal(matched(t, '/x', 'GET', { host: 'api.example.com' }), 'api');
      assert.equal(matched(t, '/x', 'GET', { host: 'API.example.com:8080' }), 'api');
      assert.equal(matched(t, '/x', 'GET', { host: 'www.example.com' }), 'star');
      assert.equal(matched(t, '/x', 'GET', {}), 'star');
    });

    it('matches the host it is given rather than the Host header', () => {
      const t = table({ prefix: '/', name: 'api', hostname: 'api.example.com' }, { prefix: '/', name: 'star' });
      assert.equal(t.match('/x', 'GET', { host: 'www.example.com' }, 'api.example.com')?.target, 'api');
      assert.equal(t.match('/x', 'GET', { host: 'api.example.com' }, 'www.example.com')?.target, 'star');
      assert.equal(t.match('/x', 'GET', { host: 'api.example.com' }, '')?.target, 'star');
    });

    it('reads host, the older field, as an exact hostname', () => {
      const t = table({ prefix: '/', name: 'old', host: 'quote.example.com' }, { prefix: '/', name: 'rest' });
      assert.equal(matched(t, '/x', 'GET', { host: 'quote.example.com' }), 'old');
      assert.equal(matched(t, '/x', 'GET', { host: 'quote.example.org' }), 'rest');
    });

    it('tries a route with a hostname before one without on the same prefix, whatever the config order', () => {
      const t = table({ prefix: '/v1/', name: 'any' }, { prefix: '/v1/', name: 'api', hostname: 'api.example.com' });
      assert.deepEqual(
        t.routes.map((r) => r.target),
        ['api', 'any'],
      );
      assert.equal(matched(t, '/v1/x', 'GET', { host: 'api.example.com' }), 'api');
      assert.equal(matched(t, '/v1/x', 'GET', { host: 'other.example.com' }), 'any');
    });

    it('tries an exact hostname before a glob, and a longer glob before a shorter, on the same prefix', () => {
      const t = table(
        { prefix: '/', name: 'prefix-glob', hostname: 'api.*' },
        { prefix: '/', name: 'short-glob', hostname: '*.com' },
        { prefix: '/', name: 'long-glob', hostname: '*.example.com' },
        { prefix: '/', name: 'exact', hostname: 'api.example.com' },
      );
      assert.deepEqual(
        t.routes.map((r) => r.target),
        ['exact', 'long-glob', 'short-glob', 'prefix-glob'],
      );
      assert.equal(matched(t, '/', 'GET', { host: 'api.example.com' }), 'exact');
      assert.equal(matched(t, '/', 'GET', { host: 'www.example.com' }), 'long-glob');
      assert.equal(matched(t, '/', 'GET', { host: 'api.example.org' }), 'prefix-glob');
    });

    it('counts a hostname as one constraint among the method and headers, after the prefix and precedence', () => {
      const t = table(
        { prefix: '/v1/', name: 'host-and-method', hostname: 'api.example.com', method: 'POST' },
        { prefix: '/v1/hotels/', name: 'longer' },
        { prefix: '/v1/', name: 'host', hostname: 'api.example.com' },
        { prefix: '/v1/', name: 'first', precedence: 1 },
      );
      assert.deepEqual(
        t.routes.map((r) => r.target),
        ['first', 'longer', 'host-and-method', 'host'],
      );
    });
  });

  describe('case_sensitive: false', () => {
    it('matches the prefix in any case, and only on segment boundaries', () => {
      const t = table(
        { prefix: '/Api/', name: 'api', case_sensitive: false },
        { prefix: '/Docs', name: 'docs', case_sensitive: false },
      );
      assert.equal(matched(t, '/api/x'), 'api');
      assert.equal(matched(t, '/API/x'), 'api');
      assert.equal(matched(t, '/DOCS/x'), 'docs');
      assert.equal(matched(t, '/docsX'), undefined);
    });

    it('matches in the case written only, by default', () => {
      const t = table({ prefix: '/api/', name: 'api' });
      assert.equal(matched(t, '/api/x'), 'api');
      assert.equal(matched(t, '/API/x'), undefined);
    });

    it('never takes a path that a route before it takes in another case', () => {
      const t = table(
        { prefix: '/api/admin/', name: 'admin' },
        { prefix: '/api/', name: 'public', case_sensitive: false, bypass_auth: true },
      );
      for (const path of ['/api/admin/x', '/API/ADMIN/x', '/api/Admin/x', '/Api/aDmIn/x'])
        assert.equal(matched(t, path), 'admin', path);
      assert.equal(matched(t, '/API/other'), 'public');
      assert.equal(matched(t, '/api/administrators'), 'public');
    });

    it('hands a path in another case to the route before it only when that route would match the request in every other way', () => {
      const t = table(
        { prefix: '/api/admin/', name: 'admin-posts', method: 'POST' },
        { prefix: '/api/', name: 'public', case_sensitive: false },
      );
      assert.equal(matched(t, '/API/ADMIN/x', 'POST'), 'admin-posts');
      assert.equal(matched(t, '/API/ADMIN/x', 'GET'), 'public');
    });

    it('refuses a path that spells a letter of a route before it with a character backends fold to that letter', () => {
      // Java's equalsIgnoreCase, Go's EqualFold and .NET's OrdinalIgnoreCase read ſ (U+017F) as s,
      // the Kelvin sign (U+212A) as k, ı (U+0131) and İ (U+0130) as i.
      const t = table(
        { prefix: '/api/secret-kit/', name: 'admin' },
        { prefix: '/api/', name: 'public', case_sensitive: false, bypass_auth: true },
      );
      for (const path of [
        '/api/%C5%BFecret-kit/x',
        '/API/SECRET-%E2%84%AAIT/x',
        '/api/secret-k%C4%B1t/x',
        '/api/secret-k%C4%B0t/x',
      ]) {
        assert.throws(
          () => t.match(path, 'GET', {}),
          (err: unknown) => err instanceof HttpError && err.status === 400 && /fold/.test(err.detail ?? ''),
          path,
        );
      }
      assert.equal(matched(t, '/api/%C5%BFecret-kitten'), 'public', 'a path no route before it would take in any case');
      assert.equal(matched(t, '/api/%C3%9Fecret-kit/x'), 'public', 'ß is no s');
    });

    it('folds no character beyond ASCII for a route matched in the case written', () => {
      const t = table({ prefix: '/api/secret/', name: 'admin' }, { prefix: '/', name: 'root' });
      assert.equal(matched(t, '/api/%C5%BFecret/x'), 'root');
    });

    it('cuts the same length off a path in another case', () => {
      const t = table({ prefix: '/Api/', name: 'api', case_sensitive: false });
      const route = t.match('/aPI/Messages', 'GET', {});
      assert.ok(route);
      assert.equal(rewritePath(route, '/aPI/Messages'), '/Messages');
    });
  });

  describe('rewrite', () => {
    function rewrite(prefix: string, rewriteTo: string | undefined, path: string): string {
      const t = table(rewriteTo === undefined ? { prefix } : { prefix, rewrite: rewriteTo });
      const route = t.match(path, 'GET', {});
      assert.ok(route, `${path} should match ${prefix}`);
      return rewritePath(route, path);
    }

    it('replaces the prefix with / by default, never making //', () => {
      assert.equal(rewrite('/v1/hotels/', undefined, '/v1/hotels/bookings/x'), '/bookings/x');
      assert.equal(rewrite('/v1/hotels/', undefined, '/v1/hotels/'), '/');
      assert.equal(rewrite('/v1/hotels', undefined, '/v1/hotels/bookings/x'), '/bookings/x');
      assert.equal(rewrite('/v1/hotels', undefined, '/v1/hotels'), '/');
      assert.equal(rewrite('/v1/hotels', undefined, '/v1/hotels/'), '/');
      assert.equal(rewrite('/', undefined, '/x/y'), '/x/y');
    });

    it('forwards the path unchanged with rewrite ""', () => {
      assert.equal(rewrite('/v1/hotels', '', '/v1/hotels/bookings/x'), '/v1/hotels/bookings/x');
      assert.equal(rewrite('/v1/hotels', '', '/v1/hotels'), '/v1/hotels');
    });

    it('puts any other rewrite in place of the prefix, with one slash where they join', () => {
      assert.equal(rewrite('/api/', '/v2', '/api/messages/1'), '/v2/messages/1');
      assert.equal(rewrite('/api/', '/v2', '/api/'), '/v2/');
      assert.equal(rewrite('/api/', '/v2/', '/api/messages'), '/v2/messages');
      assert.equal(rewrite('/api', '/v2/', '/api/messages'), '/v2/messages');
      assert.equal(rewrite('/api', '/v2/', '/api'), '/v2/');
      assert.equal(rewrite('/api', '/v2', '/api'), '/v2');
      assert.equal(rewrite('/', '/base', '/x'), '/base/x');
    });
  });
});
