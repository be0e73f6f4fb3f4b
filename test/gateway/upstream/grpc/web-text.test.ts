/**
 * gRPC-Web's text form on its own. The base64 body of a call, decoded as it
 * streams: quartets split across chunks, padded quartets before others, and
 * text that is not base64 or ends inside a quartet refused with the
 * gateway's 400. The answer, encoded frame by frame: each gRPC frame a
 * base64 unit of its own however the upstream's chunks split it.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { HttpError } from '../../../../src/http';
import { GrpcWebTextDecoder, GrpcWebTextEncoder } from '../../../../src/gateway/upstream/grpc/web-text';
import { frame } from '../../../support/grpc-web-client';

async function decoded(parts: string[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of Readable.from(parts.map((p) => Buffer.from(p))).pipe(new GrpcWebTextDecoder()))
    chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('a gRPC-Web text body, decoded as it streams', () => {
  it('decodes quartets split anywhere across chunks', async () => {
    const text = Buffer.from('hello, gRPC-Web').toString('base64');
    assert.equal(
      (await decoded([text.slice(0, 1), text.slice(1, 6), text.slice(6, 7), text.slice(7)])).toString(),
      'hello, gRPC-Web',
    );
  });

  it('decodes padded segments one after another, as a client that encodes each message sends them', async () => {
    const text =
      Buffer.from('ab').toString('base64') +
      Buffer.from('c').toString('base64') +
      Buffer.from('def').toString('base64');
    assert.equal((await decoded([text])).toString(), 'abcdef');
  });

  it('refuses text that is not base64, and a body that ends inside a quartet, with a 400', async () => {
    for (const parts of [['AAAA*AAA'], ['AA=A'], ['AAAAA']]) {
      await assert.rejects(decoded(parts), (err: unknown) => err instanceof HttpError && err.status === 400);
    }
  });
});

/** What the encoder writes for `chunks`, chunk by chunk, and what it holds back at the end. */
function encoded(chunks: Buffer[]): { written: string[]; rest: string } {
  const encoder = new GrpcWebTextEncoder();
  return { written: chunks.map((chunk) => encoder.encode(chunk)), rest: encoder.flush() };
}

/** `bytes` cut at `cuts`. */
function cut(bytes: Buffer, ...cuts: number[]): Buffer[] {
  return [0, ...cuts].map((from, i) => bytes.subarray(from, [...cuts, bytes.length][i]));
}

describe('a gRPC-Web text answer, encoded frame by frame', () => {
  const one = frame('first message');
  const two = frame('2nd');

  it('encodes each frame of a chunk as a base64 unit of its own, padding and all', () => {
    const { written, rest } = encoded([Buffer.concat([one, two])]);
    assert.deepEqual(written, [one.toString('base64') + two.toString('base64')]);
    assert.equal(rest, '');
  });

  it('writes a frame split across chunks in whole triplets, which read as that one unit', () => {
    const bytes = Buffer.concat([one, two]);
    for (const cuts of [[1], [3], [5, 7], [6, one.length + 2], [one.length - 1, one.length + 4]]) {
      const { written, rest } = encoded(cut(bytes, ...cuts));
      assert.equal(written.join(''), one.toString('base64') + two.toString('base64'), `cut at ${cuts.join(', ')}`);
      assert.equal(rest, '');
      for (const text of written) assert.equal(text.length % 4, 0, 'every write is whole quartets');
    }
  });

  it('holds back no more than a frame head or a triplet, and pads what an answer cut inside a frame left', () => {
    const { written, rest } = encoded([one.subarray(0, 3), one.subarray(3, 10)]);
    assert.deepEqual(written, ['', one.subarray(0, 9).toString('base64')]);
    assert.equal(rest, one.subarray(9, 10).toString('base64'));
  });

  it('encodes an empty message as its frame head alone', () => {
    const empty = frame('');
    assert.deepEqual(encoded([empty, two]).written, [empty.toString('base64'), two.toString('base64')]);
  });
});
