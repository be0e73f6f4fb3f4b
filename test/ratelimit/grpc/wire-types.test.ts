/**
 * @module test/ratelimit/grpc/wire-types
 * A rate-limit request whose known fields carry another wire type than
 * their own is read as protobuf-go (envoyproxy/ratelimit's) reads it: such
 * a field is skipped, not read as its number says; bytes that are no
 * message at all are refused and counted nowhere.
 */
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import {
  createRateLimitGrpcServer,
  createRateLimitService,
  ENVOY_V3_SERVICE,
  LYFT_SERVICE,
  type RateLimitGrpcServer,
  type RateLimitService,
} from '../../../src/ratelimit';
import { methodOf } from '../../../src/ratelimit/grpc/protos';
import { grpcClients, unary, type Clients } from '../../support/grpc-clients';
import { memoryLogger } from '../../support/memory-logger';

const LIMITS = [{ domain: 't', descriptors: [{ key: 'k', rate_limit: { unit: 'day', requests_per_unit: 5 } }] }];

/** A length-delimited field: its tag, its length, its bytes. */
const field = (number: number, bytes: Buffer) => Buffer.concat([Buffer.from([(number << 3) | 2, bytes.length]), bytes]);
const text = (s: string) => Buffer.from(s, 'utf8');
/** An entry `k=<value>`, with `before` written first inside it. */
const entry = (value: string, before: number[] = []) =>
  Buffer.concat([Buffer.from(before), field(1, text('k')), field(2, text(value))]);
/** A request of domain `t` and one descriptor of `entryBytes`, with `after` written last. */
const request = (entryBytes: Buffer, after: number[] = []) =>
  Buffer.concat([field(1, text('t')), field(2, field(1, entryBytes)), Buffer.from(after)]);

/** Sends bytes as `service`'s ShouldRateLimit, as a client that does not check what it sends. */
function callRaw(client: grpc.Client, service: string, bytes: Buffer): Promise<{ overall_code: string }> {
  const method = methodOf(service, 'ShouldRateLimit');
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      method.path,
      (b: Buffer) => b,
      method.responseDeserialize,
      bytes,
      { deadline: Date.now() + 600_000 },
      (err, res) => (err ? reject(err) : resolve(res as { overall_code: string })),
    );
  });
}

describe('rate-limit requests whose fields carry the wrong wire type', () => {
  let service: RateLimitService;
  let server: RateLimitGrpcServer;
  let clients: Clients;
  let n = 0;
  /** A value no other test counted. */
  const fresh = () => `wt-${process.pid}-${n++}`;
  /** What is left of `k=<value>`'s 5 a day, asked without counting. */
  const remaining = async (value: string) =>
    (
      await unary(clients.envoy, 'ShouldRateLimit', {
        domain: 't',
        descriptors: [{ entries: [{ key: 'k', value }], hits_addend: { value: 0 } }],
      })
    ).statuses[0].limit_remaining as number;

  before(async () => {
    service = createRateLimitService({ limits: LIMITS, logger: memoryLogger() });
    server = createRateLimitGrpcServer(service, { port: 0 });
    clients = grpcClients(`127.0.0.1:${await server.start()}`);
  });
  after(async () => {
    clients.close();
    await server.stop();
    await service.close();
  });

  it('refuses, counting nothing, an entry whose key is a varint followed by a group never closed, which protobufjs read as the key k', async () => {
    const value = fresh();
    // 08 01: key as a varint; 6b: field 13 opening a group no end closes.
    const bytes = request(Buffer.concat([Buffer.from([0x08, 0x01, 0x6b]), field(2, text(value))]));
    for (const name of [ENVOY_V3_SERVICE, LYFT_SERVICE]) {
      await assert.rejects(callRaw(clients.envoy, name, bytes), (err: grpc.ServiceError) => {
        assert.equal(err.code, grpc.status.INTERNAL);
        return true;
      });
    }
    assert.equal(await remaining(value), 5);
  });

  it('skips a key written as a varint before the real one, and counts the entry the real key names', async () => {
    const value = fresh();
    for (const name of [ENVOY_V3_SERVICE, LYFT_SERVICE]) {
      assert.equal((await callRaw(clients.envoy, name, request(entry(value, [0x08, 0x05])))).overall_code, 'OK');
    }
    assert.equal(await remaining(value), 3);
  });

  it('keeps the domain when a second one comes as a varint, where protobufjs read it as empty and refused the call', async () => {
    const value = fresh();
    assert.equal(
      (await callRaw(clients.envoy, ENVOY_V3_SERVICE, request(entry(value), [0x08, 0x00]))).overall_code,
      'OK',
    );
    assert.equal(await remaining(value), 4);
  });

  it('skips a request hits_addend written as a length-delimited field, and counts one hit', async () => {
    const value = fresh();
    // Field 3 as bytes: protobufjs read its length as the hits, 5, and the bytes after as fields.
    assert.equal(
      (await callRaw(clients.envoy, ENVOY_V3_SERVICE, request(entry(value), [0x1a, 0x01, 0x05]))).overall_code,
      'OK',
    );
    assert.equal(await remaining(value), 4);
  });

  it('reads a limit override whose count is written as bytes as one without a count or unit, and refuses it so, counting nothing', async () => {
    const value = fresh();
    // A descriptor with its entry, then limit { requests_per_unit as bytes }: what is left of the override names no unit.
    const descriptor = Buffer.concat([field(1, entry(value)), field(2, Buffer.from([0x0a, 0x01, 0x01]))]);
    const bytes = Buffer.concat([field(1, text('t')), field(2, descriptor)]);
    await assert.rejects(callRaw(clients.envoy, ENVOY_V3_SERVICE, bytes), (err: grpc.ServiceError) => {
      assert.equal(err.code, grpc.status.INVALID_ARGUMENT);
      assert.match(err.details, /^descriptors\[0\]\.limit\.unit: UNKNOWN is not a rate-limit unit/);
      return true;
    });
    assert.equal(await remaining(value), 5);
  });
});
