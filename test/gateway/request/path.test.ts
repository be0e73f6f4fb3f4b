import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { HttpError } from '../../../src/http';
import { ConfigError, createGateway, type Gateway } from '../../../src/gateway';
import {
  isNormalPath,
  normalisePath,
  UNSAFE_ESCAPES,
  unsafeEscape,
  withoutParameters,
} from '../../../src/gateway/request/path';
import { close, listen } from '../../support/server';
import { configOf, mapping } from '../../support/records';
import { recordingUpstream } from '../../support/upstreams';
import { send } from '../../support/client';

function rejects(path: string, detail: RegExp): void {
  assert.throws(
    () => normalisePath(path),
    (err: unknown) => err instanceof HttpError && err.status === 400 && detail.test(err.detail ?? ''),
    `${path} should be a 400`,
  );
}

describe('gateway path normalisation', () => {
  it('returns a normal path as the very same string', () => {
    for (const path of ['/', '/v1/hotels', '/v1/hotels/', '/v1/hotels/bookings/2b5f', "/a:b@c!$&'()*+,;=-._~"]) {
      assert.equal(isNormalPath(path), true, path);
      assert.equal(normalisePath(path), path);
    }
  });

  it('takes the slow path only for paths that need it', () => {
    for (const path of ['//v1', '/v1/./x', '/v1/%41', '/v1\\x', '/.well-known', '/a"b', 'x']) {
      assert.equal(isNormalPath(path), false, path);
    }
  });

  const cases: [string, string][] = [
    ['/v1/hotels/../cars/x', '/v1/cars/x'],
    ['//v1/cars', '/v1/cars'],
    ['/v1//cars///x', '/v1/cars/x'],
    ['/v1/%63ars', '/v1/cars'],
    ['/v1/%63%41rs', '/v1/cArs'],
    ['/v1/cars/%2e%2e/hotels', '/v1/hotels'],
    ['/v1/cars/%2E%2e/hotels', '/v1/hotels'],
    ['/v1/cars/.%2E/hotels', '/v1/hotels'],
    ['/v1/./cars', '/v1/cars'],
    ['/v1/%2e/cars', '/v1/cars'],
    ['/v1/cars/.', '/v1/cars/'],
    ['/v1/cars/..', '/v1/'],
    ['/v1/cars/x/..', '/v1/cars/'],
    ['/v1\\cars', '/v1/cars'],
    ['\\v1\\cars\\', '/v1/cars/'],
    ['/v1/a%3ab', '/v1/a%3Ab'],
    ['/v1/a%3Ab', '/v1/a%3Ab'],
    ['/v1/%7e%5F%2D', '/v1/~_-'],
    ['/v1/a%20b', '/v1/a%20b'],
    ['/v1/a%c3%a9', '/v1/a%C3%A9'],
    ['/v1/a"b<c>', '/v1/a%22b%3Cc%3E'],
    ['/v1/{x}|^`[y]', '/v1/%7Bx%7D%7C%5E%60%5By%5D'],
    ['/v1/café', '/v1/caf%C3%A9'],
    ['/.well-known/x', '/.well-known/x'],
    ['/a/.../b', '/a/.../b'],
    ['/a/..b/.c', '/a/..b/.c'],
    ['/a/..', '/'],
    ['/.', '/'],
    ['//', '/'],
  ];
  for (const [spelling, normal] of cases) {
    it(`reads ${spelling} as ${normal}`, () => {
      assert.equal(normalisePath(spelling), normal);
      assert.equal(normalisePath(normal), normal, 'the normal form is a fixed point');
    });
  }

  it('refuses an encoded slash or backslash, whatever its case', () => {
    for (const path of ['/v1%2Fcars', '/v1%2fcars', '/v1/a%5Cb', '/v1/a%5cb', '/%2F']) {
      rejects(path, /encoded slash or backslash/);
    }
  });

  it('refuses a path that climbs above the root', () => {
    for (const path of ['/..', '/../x', '/v1/../../x', '/%2e%2e/x', '/v1/%2E%2e/%2e./x', '//..//x', '\\..']) {
      rejects(path, /climbs above the root/);
    }
  });

  it('refuses a dot segment with ;parameters, which Tomcat and Spring read as a dot segment', () => {
    for (const path of [
      '/public/..;/admin',
      '/public/..;x=1/admin',
      '/public/%2e%2e;/admin',
      '/public/.%2E;/admin',
      '/a/.;/b',
      '/a/..;',
    ]) {
      rejects(path, /dot segment may not carry ;parameters/);
    }
  });

  it('refuses a dot segment with an encoded semicolon, which some backends decode before they drop parameters', () => {
    for (const path of ['/public/..%3B/admin', '/public/..%3bx/admin', '/public/%2e%2e%3B/admin', '/a/.%3B/b']) {
      rejects(path, /dot segment may not carry ;parameters/);
    }
  });

  it('drops the ;parameters of every segment, encoded or not, for the form without them', () => {
    const cases: [string, string][] = [
      ['/a;x/b', '/a/b'],
      ['/a/b;jsessionid=1', '/a/b'],
      ['/a;x=1;y=2/b;z/', '/a/b/'],
      ['/;x/a', '/a'],
      ['/a/;/b', '/a/b'],
      ['/a%3Bx/b', '/a/b'],
      ['/;', '/'],
    ];
    for (const [path, plain] of cases) assert.equal(withoutParameters(normalisePath(path)), plain, path);
    const bare = '/a/b%3A';
    assert.equal(withoutParameters(bare), bare);
  });

  it('keeps a segment that only starts with dots before a semicolon', () => {
    assert.equal(normalisePath('/a/...;x/b'), '/a/...;x/b');
    assert.equal(normalisePath('/a/.x;y'), '/a/.x;y');
  });

  it('refuses an encoded NUL, which C-string backends read as the end of the path', () => {
    for (const path of ['/admin%00/x', '/x/..%00/admin', '/%00', '/a%00b']) rejects(path, /encoded NUL/);
  });

  it('refuses malformed escapes', () => {
    for (const path of ['/a%', '/a%2', '/a%zz', '/a%g1', '/%%41']) rejects(path, /malformed percent-escape/);
  });

  it('refuses a path that does not start with a slash', () => {
    rejects('*', /must start with \//);
    rejects('', /must start with \//);
  });

  it('refuses an IIS-style %u escape as a malformed one', () => {
    for (const path of ['/a/%u002e%u002e/b', '/%U002F']) rejects(path, /malformed percent-escape/);
  });
});

describe('escapes a backend may read otherwise', () => {
  const unsafe = (path: string) => unsafeEscape(normalisePath(path));

  it('names escapes that are not UTF-8: overlong, lone or missing continuation bytes, surrogates, past U+10FFFF', () => {
    const spellings = [
      '/%C0%AE%C0%AE/x',
      '/%c0%ae',
      '/%C1%9C',
      '/%E0%80%AE',
      '/%F0%80%80%AE',
      '/%F8%80%80%80%AE',
      '/%80',
      '/a%BFb',
      '/%C3',
      '/%C3x',
      '/%E2%84',
      '/%ED%A0%80',
      '/%ED%B0%80',
      '/%F4%90%80%80',
      '/%F5%80%80%80',
      '/%FF',
      '/caf%E9',
    ];
    for (const path of spellings) assert.equal(unsafe(path), UNSAFE_ESCAPES.notUtf8, path);
  });

  it('names an encoded % before an encoded dot, slash, backslash, semicolon, NUL or %u, encoded once more or not', () => {
    const spellings = [
      '/%252e%252e/x',
      '/a/%252E',
      '/a%252fb',
      '/a%252F',
      '/a%255cb',
      '/a%255C',
      '/..%253B/x',
      '/a%2500',
      '/a%25u002e',
      '/a%25U002F',
      '/a%25252e',
      '/a%2525252f',
      '/a%25%32%65',
      '/%25%32%45%25%32%45/x',
    ];
    for (const path of spellings) assert.equal(unsafe(path), UNSAFE_ESCAPES.decodedAgain, path);
  });

  it('names an encoded % before escapes that are not UTF-8 once decoded again', () => {
    for (const path of ['/%25C0%25AE', '/%25c0%25ae', '/%25C3', '/%25E9', '/%25C0%2525AE', '/%2525C0%2525AE']) {
      assert.equal(unsafe(path), UNSAFE_ESCAPES.notUtf8Again, path);
    }
  });

  it('names escapes of a character that NFKC or Windows best-fit folds to a dot, slash or backslash, encoded once or twice', () => {
    const spellings = [
      '/%EF%BC%8E%EF%BC%8E/x',
      '/a%EF%BC%8Fb',
      '/a%EF%BC%BCb',
      '/%E2%80%A5/x',
      '/%E2%80%A4',
      '/%EF%B9%92',
      '/%E2%88%95',
      '/%E2%88%96',
      '/%E2%81%84',
      '/%EF%B9%A8',
      '/%E2%A7%B8',
      '/%E2%A7%B9',
      '/caf%C3%A9%EF%BC%8E',
      '/%25EF%25BC%258E%25EF%25BC%258E/x',
    ];
    for (const path of spellings)
      assert.match(
        unsafe(path) ?? 'passed',
        /^percent-escapes of a character that backends fold to a dot, slash or backslash /,
        path,
      );
  });

  it('names nothing in a path a backend reads alike: UTF-8, a % as written, an encoded % before anything else', () => {
    const spellings = [
      '/',
      '/v1/hotels',
      '/caf%C3%A9',
      '/caf%c3%a9',
      '/%E2%84%AA',
      '/%F0%9F%98%80',
      '/%EF%BF%BF',
      '/100%25',
      '/a%25',
      '/a%2520b',
      '/a%2541',
      '/a%2525',
      '/a%25uzz',
      '/a%25C3%25A9',
      '/a%2525C3%2525A9',
      '/a%3A%25',
      '/a%3Bb',
    ];
    for (const path of spellings) assert.equal(unsafe(path), undefined, path);
  });
});

describe('paths with escapes a backend may read otherwise, through the gateway', () => {
  let backend: Awaited<ReturnType<typeof recordingUpstream>>;
  let gateway: Gateway;
  let server: Server;
  let base = '';

  before(async () => {
    backend = await recordingUpstream();
    gateway = createGateway({
      config: configOf(
        mapping('/public/', backend.url, { name: 'public', rewrite: '', bypass_auth: true }),
        mapping('/legacy/', backend.url, { name: 'legacy', rewrite: '', allow_unsafe_path_escapes: true }),
      ),
    });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });
  after(async () => {
    await close(server);
    await gateway.close();
    await close(backend.server);
  });

  const refused: [string, string][] = [
    ['/public/%252e%252e/admin', UNSAFE_ESCAPES.decodedAgain],
    ['/public/%252E%252E%252Fadmin', UNSAFE_ESCAPES.decodedAgain],
    ['/public/..%252fadmin', UNSAFE_ESCAPES.decodedAgain],
    ['/public/..%255cadmin', UNSAFE_ESCAPES.decodedAgain],
    ['/public/%25252e%25252e/admin', UNSAFE_ESCAPES.decodedAgain],
    ['/public/%25u002e%25u002e/admin', UNSAFE_ESCAPES.decodedAgain],
    ['/public/%C0%AE%C0%AE/admin', UNSAFE_ESCAPES.notUtf8],
    ['/public/%C0%AF', UNSAFE_ESCAPES.notUtf8],
    ['/public/%E0%80%AE%E0%80%AE/admin', UNSAFE_ESCAPES.notUtf8],
    ['/public/%ED%A0%80', UNSAFE_ESCAPES.notUtf8],
    ['/public/adm%80in', UNSAFE_ESCAPES.notUtf8],
    ['/public/%25C0%25AE%25C0%25AE/admin', UNSAFE_ESCAPES.notUtf8Again],
    ['/public/%EF%BC%8E%EF%BC%8E/admin', UNSAFE_ESCAPES.foldsToSeparator],
    ['/public/..%EF%BC%8Fadmin', UNSAFE_ESCAPES.foldsToSeparator],
  ];
  for (const [path, detail] of refused) {
    it(`answers ${path} with 400 and the error body, and the backend sees nothing`, async () => {
      const seen = backend.received.length;
      const res = await send(base, path);
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.json(), { code: 400, message: '400: Bad Request', detail });
      assert.equal(backend.received.length, seen);
    });
  }

  it('forwards a path that a backend reads alike as it came', async () => {
    for (const path of ['/public/caf%C3%A9', '/public/100%25', '/public/a%2520b', '/public/%25/x', '/public/a%2525']) {
      const res = await send(base, path);
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assert.equal(backend.received.at(-1)!.url, path);
    }
  });

  it('forwards them verbatim on a Mapping with allow_unsafe_path_escapes, and still refuses an encoded slash there', async () => {
    for (const path of [
      '/legacy/%252e%252e/x',
      '/legacy/caf%E9',
      '/legacy/%C0%AE',
      '/legacy/%25u002e',
      '/legacy/%EF%BC%8E%EF%BC%8E/x',
    ]) {
      const res = await send(base, path);
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assert.equal(backend.received.at(-1)!.url, path);
    }
    const slash = await send(base, '/legacy/a%2Fb');
    assert.equal(slash.status, 400);
    assert.equal(slash.json().detail, 'an encoded slash or backslash is not allowed in the path');
  });

  it('refuses a prefix with such escapes unless its Mapping allows them', () => {
    assert.throws(
      () => createGateway({ config: configOf(mapping('/files/%C0%AE/', 'http://127.0.0.1:1', { name: 'odd' })) }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.length === 1 &&
        err.problems[0].text ===
          `Mapping odd: prefix: '/files/%C0%AE/' would have every request it matched refused: ${UNSAFE_ESCAPES.notUtf8} (allow_unsafe_path_escapes: true lets them through)`,
    );
    const allowed = createGateway({
      config: configOf(mapping('/files/%C0%AE/', 'http://127.0.0.1:1', { allow_unsafe_path_escapes: true })),
    });
    void allowed.close();
  });
});
