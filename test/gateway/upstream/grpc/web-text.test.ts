/**
 * The base64 body of a gRPC-Web text call, decoded as it streams: quartets
 * split across chunks, padded quartets before others, and text that is not
 * base64 or ends inside a quartet refused with the gateway's 400.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { HttpError } from '../../../../src/http';
import { GrpcWebTextDecoder } from '../../../../src/gateway/upstream/grpc/web-text';

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
