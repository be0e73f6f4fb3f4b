/**
 * The trailer frame that carries a gRPC-Web answer's trailers in its body,
 * as Envoy's grpc_web filter writes it.
 */
import assert from 'node:assert/strict';
import { trailerFrame } from '../../../../src/gateway/upstream/grpc/web';

describe('the trailer frame of a gRPC-Web answer', () => {
  it('is 0x80, a big-endian length, and key:value lines in lower case, pseudo-headers left out', () => {
    const frame = trailerFrame({ ':status': '200', 'grpc-status': '0', 'X-Two': ['a', 'b'] });
    const lines = 'grpc-status:0\r\nx-two:a\r\nx-two:b\r\n';
    assert.equal(frame[0], 0x80);
    assert.equal(frame.readUInt32BE(1), lines.length);
    assert.equal(frame.subarray(5).toString(), lines);
  });
});
