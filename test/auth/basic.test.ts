import assert from 'node:assert/strict';
import { parseBasic } from '../../src/auth';

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

describe('reading Basic credentials', () => {
  it('reads user and password, splitting at the first colon', () => {
    assert.deepEqual(parseBasic(`Basic ${b64('alice:won:der:land')}`), { user: 'alice', password: 'won:der:land' });
  });

  it('takes the scheme in any case and extra spaces before the token', () => {
    assert.deepEqual(parseBasic(`bAsIc   ${b64('bob:builder')}`), { user: 'bob', password: 'builder' });
  });

  it('reads UTF-8 user names and passwords', () => {
    assert.deepEqual(parseBasic(`Basic ${b64('jörg:pässwörd')}`), { user: 'jörg', password: 'pässwörd' });
  });

  it('accepts an empty password and unpadded base64', () => {
    assert.deepEqual(parseBasic(`Basic ${b64('ab:').replace(/=+$/, '')}`), { user: 'ab', password: '' });
  });

  const refusals: Array<[string, string | string[] | undefined, string]> = [
    ['no header', undefined, 'missing'],
    ['an empty header', '', 'missing'],
    ['two headers', ['Basic YTpi', 'Basic YTpi'], 'repeated'],
    ['another scheme', 'Bearer abc.def', 'not-basic'],
    ['a scheme that starts like Basic', `Basicx ${b64('a:b')}`, 'not-basic'],
    ['the scheme alone', 'Basic', 'bad-base64'],
    ['characters outside base64', 'Basic YWxp!2U6d29u', 'bad-base64'],
    ['a base64 token with bad padding', 'Basic YWE=6YQ==', 'bad-base64'],
    ['a base64 token of impossible length', 'Basic YWJjZ', 'bad-base64'],
    ['two tokens', `Basic ${b64('a:b')} ${b64('c:d')}`, 'bad-base64'],
    ['bytes that are not UTF-8', `Basic ${b64(Buffer.from([0x61, 0x3a, 0xff, 0xfe]))}`, 'not-utf8'],
    ['no colon', `Basic ${b64('alicewonderland')}`, 'no-colon'],
    ['an empty user', `Basic ${b64(':wonderland')}`, 'empty-user'],
    ['a header over the limit', `Basic ${'A'.repeat(5000)}`, 'too-long'],
  ];
  for (const [what, header, problem] of refusals) {
    it(`refuses ${what}`, () => {
      assert.deepEqual(parseBasic(header), { problem });
    });
  }
});
