import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { hasOtherTransferCoding, HttpError, transferCodingRefusal } from '../../../src/http';

function request(version: string, transferEncoding?: string): IncomingMessage {
  const [major, minor] = version.split('.').map(Number);
  const headers = transferEncoding === undefined ? {} : { 'transfer-encoding': transferEncoding };
  return { httpVersionMajor: major, httpVersionMinor: minor, headers } as unknown as IncomingMessage;
}

describe('http/request/transfer-coding', () => {
  it('takes chunked alone, in any case and with spaces, as the one coding it reads', () => {
    for (const value of [undefined, 'chunked', 'Chunked', ' CHUNKED '])
      assert.equal(hasOtherTransferCoding(value), false, value);
  });

  it('tells of any other coding, before chunked or alone', () => {
    for (const value of ['gzip, chunked', 'identity', 'gzip', 'chunked, chunked', 'xchunked'])
      assert.equal(hasOtherTransferCoding(value), true, value);
  });

  it('refuses another coding with 501, and any Transfer-Encoding in HTTP/1.0 with 400', () => {
    assert.equal(transferCodingRefusal(request('1.1')), undefined);
    assert.equal(transferCodingRefusal(request('1.1', 'chunked')), undefined);
    const other = transferCodingRefusal(request('1.1', 'gzip, chunked'));
    assert.ok(other instanceof HttpError && other.status === 501);
    const old = transferCodingRefusal(request('1.0', 'chunked'));
    assert.ok(old instanceof HttpError && old.status === 400);
    assert.equal(old.detail, 'an HTTP/1.0 request may not have a Transfer-Encoding');
  });
});
