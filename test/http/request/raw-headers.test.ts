import assert from 'node:assert/strict';
import { headerText, repeatedHeader } from '../../../src/http';

/** A value as Node hands it over: one character per byte sent. */
const asSent = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

describe('raw headers', () => {
  describe('repeatedHeader', () => {
    it('gives every value of a header sent on more than one line, in any case', () => {
      assert.deepEqual(repeatedHeader(['Host', 'a', 'X-Other', 'b', 'HOST', 'c'], 'host'), ['a', 'c']);
    });

    it('gives nothing for a header sent once or not at all', () => {
      assert.equal(repeatedHeader(['Host', 'a'], 'host'), undefined);
      assert.equal(repeatedHeader([], 'host'), undefined);
    });
  });

  describe('headerText', () => {
    it('reads a value sent in UTF-8 as its text', () => {
      assert.equal(headerText(asSent('jürgen')), 'jürgen');
      assert.equal(headerText(asSent('山田')), '山田');
    });

    it('returns an ASCII value as it is', () => {
      assert.equal(headerText('alice'), 'alice');
      assert.equal(headerText(''), '');
    });

    it('returns a value that is text already as it is', () => {
      assert.equal(headerText('jürgen 山田'), 'jürgen 山田');
    });

    it('leaves bytes that are not UTF-8 one character each', () => {
      assert.equal(headerText('j\xfcrgen'), 'j\xfcrgen');
    });
  });
});
