import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connectionKeyer, createHeaderKeyer } from '../../src/auth/header-key';

describe('cache keys of Authorization headers', () => {
  const secret = 'f'.repeat(32) + '0123456789abcdef0123456789abcdef';

  it('are SHA-256 of the process secret followed by the header as UTF-8', () => {
    const keyOf = createHeaderKeyer(secret);
    for (const header of ['Basic YWxpY2U6d29uZGVybGFuZA==', '', 'Basic \u00ff\u00fe', 'Basic 😀', 'x'.repeat(5000)]) {
      assert.equal(
        keyOf(header),
        createHash('sha256')
          .update(Buffer.from(secret + header, 'utf8'))
          .digest('base64'),
      );
    }
  });

  it('differ for headers that differ in one character', () => {
    const keyOf = createHeaderKeyer(secret);
    assert.notEqual(keyOf('Basic YWxpY2U6d29uZGVybGFuZA=='), keyOf('Basic YWxpY2U6d29uZGVybGFuZA=!'));
  });

  it('differ between processes, whose secrets are random', () => {
    const header = 'Basic YWxpY2U6d29uZGVybGFuZA==';
    assert.notEqual(createHeaderKeyer()(header), createHeaderKeyer()(header));
  });

  it('refuse a secret shorter than 32 characters or not printable ASCII', () => {
    assert.throws(() => createHeaderKeyer('short'), RangeError);
    assert.throws(() => createHeaderKeyer('é'.repeat(40)), RangeError);
  });
});

describe('cache keys remembered per connection', () => {
  const secret = 'f'.repeat(32) + '0123456789abcdef0123456789abcdef';
  const alice = 'Basic YWxpY2U6d29uZGVybGFuZA==';

  /** A keyer over the real one that counts how often it hashed. */
  function counted(): { keyOf: (header: string, connection?: object) => string; hashed: () => number } {
    const real = createHeaderKeyer(secret);
    let hashed = 0;
    const keyOf = connectionKeyer((header) => {
      hashed++;
      return real(header);
    });
    return { keyOf, hashed: () => hashed };
  }

  it('hash the header once while a connection sends the same one, and give its key each time', () => {
    const { keyOf, hashed } = counted();
    const connection = {};
    for (let i = 0; i < 3; i++) assert.equal(keyOf(alice, connection), createHeaderKeyer(secret)(alice));
    assert.equal(hashed(), 1);
  });

  it('give another header on the same connection its own key, however close to the one before', () => {
    const { keyOf, hashed } = counted();
    const real = createHeaderKeyer(secret);
    const connection = {};
    keyOf(alice, connection);
    // The same length and one character apart, a prefix, an extension, and the first again.
    for (const header of ['Basic YWxpY2U6d29uZGVybGFuZB==', 'Basic YWxpY2U6d29uZGVybGFuZA=', `${alice}=`, alice]) {
      assert.equal(keyOf(header, connection), real(header));
    }
    assert.equal(hashed(), 5);
  });

  it('keep connections apart, and remember nothing for a request without one', () => {
    const { keyOf, hashed } = counted();
    const bob = 'Basic Ym9iOmJ1aWxkZXI=';
    const one = {};
    const two = {};
    keyOf(alice, one);
    assert.equal(keyOf(bob, two), createHeaderKeyer(secret)(bob));
    assert.equal(keyOf(alice, one), createHeaderKeyer(secret)(alice));
    keyOf(alice);
    keyOf(alice);
    assert.equal(hashed(), 4);
  });
});
