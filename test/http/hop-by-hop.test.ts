/**
 * The headers of one connection, which every module that sends a message
 * leaves out of what it passes on: those that are so by name, the `Proxy-*`
 * ones, those a `Connection` header names, and the framing.
 */
import assert from 'node:assert/strict';
import { connectionNamed, FRAMING_HEADERS, HOP_BY_HOP_HEADERS, isHopByHop } from '../../src/http';

describe('http/hop-by-hop', () => {
  it("takes RFC 9110's hop-by-hop headers, HTTP/1.0's, Trailer and HTTP2-Settings for one connection's", () => {
    const expected = [
      ...['connection', 'http2-settings', 'keep-alive', 'proxy-connection'],
      ...['te', 'trailer', 'transfer-encoding', 'upgrade'],
    ];
    assert.deepEqual([...HOP_BY_HOP_HEADERS].sort(), expected);
    for (const name of expected) assert.equal(isHopByHop(name), true, name);
  });

  it("takes every Proxy-* header for one connection's, and no end-to-end header", () => {
    for (const name of ['proxy-authorization', 'proxy-authenticate', 'proxy-anything'])
      assert.equal(isHopByHop(name), true, name);
    for (const name of ['host', 'content-length', 'authorization', 'x-connection', 'trailers', 'constructor'])
      assert.equal(isHopByHop(name), false, name);
  });

  it('counts Content-Length among the framing headers, beside every hop-by-hop one by name', () => {
    assert.deepEqual([...FRAMING_HEADERS].sort(), [...HOP_BY_HOP_HEADERS, 'content-length'].sort());
  });

  it('reads the header names a Connection header lists, in lower case, but not its options', () => {
    assert.deepEqual(connectionNamed('close, X-Secret ,  Upgrade,keep-alive, x-other'), ['x-secret', 'x-other']);
    assert.deepEqual(connectionNamed(['Keep-Alive', 'X-One']), ['x-one']);
  });

  it('reads no names from a Connection header of options alone, or none at all', () => {
    for (const value of [undefined, 'close', 'Keep-Alive', 'upgrade', 'Upgrade, Connection', ' , '])
      assert.equal(connectionNamed(value), null, String(value));
  });
});
