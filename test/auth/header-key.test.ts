import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createHeaderKeyer } from '../../src/auth/header-key';

describe('cache keys of Authorization headers', () => {
  const secret = 'f'.repeat(32) + '0123456789abcdef0123456789abcdef';

  it('are SHA-256 of the process secret followed by the header as UTF-8', () => {
    const keyOf = createHeaderKeyer(secret);
    for (const header of ['Basic YWxpY2U6d29uZGVybGFuZA==', '', 'Basic \u00ff\u00fe', 'Basic 😀', 'x'.repeat(5000)]) {
      assert.equal(keyOf(header), createHash('sha256').update(Buffer.from(secret + header, 'utf8')).digest('base64'));
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
