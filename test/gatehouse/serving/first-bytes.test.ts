import assert from 'node:assert/strict';
import { HTTP2_PREFACE, protocolOfFirstBytes } from '../../../src/gatehouse/serving/first-bytes';

describe('gatehouse/serving/first-bytes', () => {
  it('reads the whole HTTP/2 preface as h2, whatever follows it', () => {
    assert.equal(protocolOfFirstBytes(HTTP2_PREFACE), 'h2');
    assert.equal(protocolOfFirstBytes(Buffer.concat([HTTP2_PREFACE, Buffer.from([0, 0, 0, 4])])), 'h2');
  });

  it('waits while the bytes are a prefix of the preface', () => {
    for (const prefix of ['P', 'PRI', 'PRI * HTTP/2.0\r\n', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r'])
      assert.equal(protocolOfFirstBytes(Buffer.from(prefix, 'latin1')), undefined, JSON.stringify(prefix));
  });

  it('reads anything else as HTTP/1.1 at once, a request of method PRI included', () => {
    for (const start of [
      'GET / HTTP/1.1\r\n',
      'POST',
      'PUT',
      'PRI / HTTP/1.1\r\n',
      'PRI * HTTP/1.1\r\n',
      '\x16\x03\x01',
    ])
      assert.equal(protocolOfFirstBytes(Buffer.from(start, 'latin1')), 'http/1.1', JSON.stringify(start));
  });
});
