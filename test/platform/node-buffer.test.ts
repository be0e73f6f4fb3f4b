/**
 * @module test/platform/node-buffer
 * What src/platform/node-buffer relies on in Node's Buffer, checked against
 * the Node running the tests: `latin1Slice` and `utf8Slice` read a range of
 * bytes as `toString` reads it, and so the text of a range is read whole,
 * from any offset, or refused when it is not UTF-8.
 */
import assert from 'node:assert/strict';
import { NODE_BUFFER_WRITTEN_FOR, utf8Text } from '../../src/platform';
import { relies } from '../support/reliance';

const rely = (what: string, holds: boolean, detail?: string) =>
  relies('node', NODE_BUFFER_WRITTEN_FOR, what, holds, detail);

describe('platform/node-buffer', () => {
  it("finds latin1Slice and utf8Slice on Node's Buffers", () => {
    const bytes = Buffer.from('key') as unknown as Record<string, unknown>;
    rely('gives a Buffer latin1Slice', typeof bytes.latin1Slice === 'function');
    rely('gives a Buffer utf8Slice', typeof bytes.utf8Slice === 'function');
  });

  it('reads an ASCII range and a UTF-8 range as toString does, from any offset', () => {
    const bytes = Buffer.from('\x08\x01path=/v1/quotes\x02grüße, 東京 🚀\x00');
    for (const [start, end] of [
      [2, 16],
      [17, bytes.length - 1],
      [20, 30],
    ]) {
      const expected = bytes.toString('utf8', start, end);
      rely('reads a range of bytes as toString does', utf8Text(bytes, start, end) === expected, `${start}..${end}`);
    }
  });

  it('reads an empty range as the empty string', () => {
    assert.equal(utf8Text(Buffer.from('abc'), 1, 1), '');
  });

  it('refuses a range that is not UTF-8, or that cuts a character in two', () => {
    assert.equal(utf8Text(Buffer.from([0x61, 0xff, 0x62]), 0, 3), undefined);
    const cut = Buffer.from('é');
    assert.equal(utf8Text(cut, 0, 1), undefined);
  });
});
