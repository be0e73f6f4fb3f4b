import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createHeaderKeyer } from '../../src/auth/header-key';

describe('cache keys of Authorization headers', () => {
  const secret = 'f'.repeat(32) + '0123456789abcdef0123456789abcdef';

  it('are HMAC-SHA256 of the header under the process key', () => {
    const keyOf = createHeaderKeyer(secret);
    for (const header of ['Basic YWxpY2U6d29uZGVybGFuZA==', '', 'Basic \u00ff\u00fe', 'x'.repeat(5000)]) {
      assert.equal(keyOf(header), createHmac('sha256', secret).update(header).digest('base64'));
    }
  });

  it('differ between processes, whose keys are random', () => {
    const header = 'Basic YWxpY2U6d29uZGVybGFuZA==';
    assert.notEqual(createHeaderKeyer()(header), createHeaderKeyer()(header));
  });

  it('refuse a key that is not one block of ASCII', () => {
    assert.throws(() => createHeaderKeyer('short'), RangeError);
  });
});
