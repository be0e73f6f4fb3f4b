import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { Writer } from 'protobufjs';
import {
  createRateLimitGrpcServer,
  createRateLimitService,
  ENVOY_V3_SERVICE,
  LYFT_SERVICE,
  type RateLimitGrpcServer,
} from '../../../src/ratelimit';
import { methodOf } from '../../../src/ratelimit/grpc/protos';
import { memoryLogger } from '../../support/memory-logger';

const LIMITS = [{ domain: 'd', descriptors: [{ key: 'k', rate_limit: { unit: 'minute', requests_per_unit: 1 } }] }];

function lengthDelimited(w: Writer, field: number, bytes: Uint8Array): void {
  w.uint32((field << 3) | 2).bytes(bytes);
}

/** A RateLimitRequest written byte by byte, as a client that does not check its strings may send it. */
function rawRequest(domain: Buffer, entries: [Buffer, Buffer][]): Buffer {
  const descriptor = Writer.create();
  for (const [key, value] of entries) {
    const entry = Writer.create();
    lengthDelimited(entry, 1, key);
    lengthDelimited(entry, 2, value);
    lengthDelimited(descriptor, 1, entry.finish());
  }
  const request = Writer.create();
  lengthDelimited(request, 1, domain);
  lengthDelimited(request, 2, descriptor.finish());
  return Buffer.from(request.finish());
}

describe('rate-limit gRPC requests that are not UTF-8', () => {
  let server: RateLimitGrpcServer;
  let client: grpc.Client;

  before(async () => {
    server = createRateLimitGrpcServer(createRateLimitService({ limits: LIMITS, logger: memoryLogger() }), { port: 0 });
    client = new grpc.Client(`127.0.0.1:${await server.start()}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await server.stop();
  });

  function call(service: string, body: Buffer): Promise<{ overall_code: string; statuses: { code: string }[] }> {
    const method = methodOf(service, 'ShouldRateLimit');
    return new Promise((resolve, reject) => {
      client.makeUnaryRequest(
        method.path,
        (b: Buffer) => b,
        method.responseDeserialize as (b: Buffer) => { overall_code: string; statuses: { code: string }[] },
        body,
        { deadline: Date.now() + 600_000 },
        (err, res) => (err ? reject(err) : resolve(res!)),
      );
    });
  }

  it('refuses a value that is not UTF-8 with INVALID_ARGUMENT naming it, as a proto3 string must be', async () => {
    for (const service of [ENVOY_V3_SERVICE, LYFT_SERVICE]) {
      await assert.rejects(
        call(
          service,
          rawRequest(Buffer.from('d'), [
            [Buffer.from('k'), Buffer.from('ok')],
            [Buffer.from('k'), Buffer.from([0x61, 0xff])],
          ]),
        ),
        (err: grpc.ServiceError) =>
          err.code === grpc.status.INVALID_ARGUMENT && err.details === 'descriptors[0].entries[1].value: is not UTF-8',
      );
    }
  });

  it('does not count distinct bytes that are not UTF-8 against one counter', async () => {
    for (const byte of [0xfe, 0xfd]) {
      await assert.rejects(
        call(ENVOY_V3_SERVICE, rawRequest(Buffer.from('d'), [[Buffer.from('k'), Buffer.from([byte])]])),
        /INVALID_ARGUMENT|is not UTF-8/,
      );
    }
    // A value holding U+FFFD itself is UTF-8, and counted as any other.
    const replacement = await call(
      ENVOY_V3_SERVICE,
      rawRequest(Buffer.from('d'), [[Buffer.from('k'), Buffer.from('\ufffd')]]),
    );
    assert.equal(replacement.overall_code, 'OK');
  });

  it('refuses a key or a domain that is not UTF-8', async () => {
    await assert.rejects(
      call(ENVOY_V3_SERVICE, rawRequest(Buffer.from('d'), [[Buffer.from([0xc3]), Buffer.from('v')]])),
      /descriptors\[0\]\.entries\[0\]\.key: is not UTF-8/,
    );
    await assert.rejects(
      call(ENVOY_V3_SERVICE, rawRequest(Buffer.from([0x64, 0x80]), [[Buffer.from('k'), Buffer.from('v')]])),
      /domain: is not UTF-8/,
    );
  });
});
