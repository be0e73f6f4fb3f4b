import assert from 'node:assert/strict';
import { HttpError } from '../../src/http';
import { isNormalPath, normalisePath, withoutParameters } from '../../src/gateway';

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
    for (const path of ['/public/..;/admin', '/public/..;x=1/admin', '/public/%2e%2e;/admin', '/public/.%2E;/admin', '/a/.;/b', '/a/..;']) {
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
});
