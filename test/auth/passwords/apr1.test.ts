import assert from 'node:assert/strict';
import { apr1Hash } from '../../../src/auth';

// Every vector was written by Apache's `htpasswd -nbm <user> <password>` (2.4).
const VECTORS: Array<[password: string, hash: string]> = [
  ['apr1 secret', '$apr1$99TR60tx$1ZrXChLSKDkewdfgQ7Bi6.'],
  ['pässwörd', '$apr1$bfEe6dlv$QmhAGIQhbzyUcPw0vwbrV.'],
  ['a-password-longer-than-sixteen-bytes-for-the-loop', '$apr1$tE1ulnzF$UiiDaCmfhGO9PgQJGXmLh.'],
  ['', '$apr1$CWLfxkc0$dKNjarOuJSzu2oATPeLLI.'],
];

describe('apr1-MD5', () => {
  for (const [password, hash] of VECTORS) {
    it(`computes what Apache htpasswd -m wrote for ${JSON.stringify(password)}`, () => {
      const salt = hash.split('$')[2];
      assert.equal(apr1Hash(password, salt), hash);
    });
  }

  it('gives another hash for another password with the same salt', () => {
    assert.notEqual(apr1Hash('apr1 secreT', '99TR60tx'), '$apr1$99TR60tx$1ZrXChLSKDkewdfgQ7Bi6.');
  });
});
