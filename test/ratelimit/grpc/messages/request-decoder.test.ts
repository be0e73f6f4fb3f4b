/**
 * @module test/ratelimit/grpc/messages/request-decoder
 * A request's wire bytes are read into what protobufjs and proto-loader
 * read of them, for both services and whatever they hold; fields that
 * protobuf-go skips (unknown, or of the wrong wire type) are skipped; a
 * request past the bounds or with a string that is not UTF-8 is refused in
 * the service's words; bytes that are no message throw.
 */
import assert from 'node:assert/strict';
import { Writer } from 'protobufjs';
import {
  ENVOY_V3_SERVICE,
  LYFT_SERVICE,
  type RateLimitDescriptor,
  type RateLimitRequest,
} from '../../../../src/ratelimit';
import type { ProtoRequest } from '../../../../src/ratelimit/grpc/messages/codec';
import { methodOf } from '../../../../src/ratelimit/grpc/protos';
import {
  REFUSED,
  requestDecoder,
  type RefusedRequest,
  type RequestShape,
} from '../../../../src/ratelimit/grpc/messages/request-decoder';

const BOUNDS = { maxDescriptors: 1000, maxDescriptorEntries: 64 };
const SERVICES: [RequestShape, string][] = [
  ['envoy', ENVOY_V3_SERVICE],
  ['lyft', LYFT_SERVICE],
];

/** A seeded generator (mulberry32), so that a failure names a case that can be run again. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = ['user', 'x-gateway-test-allow', '', 'é', 'ü', '€', '😀', '_', '\\', 'a b', '\u0000', 'Z', '0'];

function randomText(next: () => number): string {
  let text = '';
  const parts = Math.floor(next() * 4);
  for (let i = 0; i < parts; i++) text += PIECES[Math.floor(next() * PIECES.length)];
  return text;
}

/** A request as proto-loader takes it, for `shape`'s service: every field sometimes there, sometimes not. */
function randomRequest(next: () => number, shape: RequestShape): ProtoRequest {
  const descriptors = Array.from({ length: Math.floor(next() * 4) }, () => {
    const d: Record<string, unknown> = {
      entries: Array.from({ length: Math.floor(next() * 4) }, () => ({
        key: randomText(next),
        value: randomText(next),
      })),
    };
    if (shape === 'envoy' && next() < 0.3)
      d.limit = { requests_per_unit: Math.floor(next() * 2 ** 32), unit: Math.floor(next() * 10) };
    if (shape === 'envoy' && next() < 0.3)
      d.hits_addend = { value: [0, 1, 7, 2 ** 32, 2 ** 53 - 1, Number.MAX_SAFE_INTEGER * 4][Math.floor(next() * 6)] };
    return d;
  });
  return {
    domain: randomText(next),
    descriptors,
    hits_addend: next() < 0.3 ? Math.floor(next() * 2 ** 32) : 0,
  } as unknown as ProtoRequest;
}

/** What the service got of a request before: proto-loader's object of it, in the typed face. */
function typedOf(msg: ProtoRequest): RateLimitRequest {
  const descriptors = (msg.descriptors ?? []).map((d) => {
    const out: RateLimitDescriptor = { entries: (d.entries ?? []).map((e) => ({ key: e.key, value: e.value })) };
    if (d.limit) out.limit = { requestsPerUnit: d.limit.requests_per_unit, unit: d.limit.unit as never };
    if (d.hits_addend) out.hitsAddend = Number(d.hits_addend.value);
    return out;
  });
  const request: RateLimitRequest = { domain: msg.domain ?? '', descriptors };
  if (msg.hits_addend) request.hitsAddend = msg.hits_addend;
  return request;
}

/** A field protobuf-go skips: an unknown number, of any wire type (a group holding a varint included). */
function unknownField(next: () => number): Buffer {
  const field = 4 + Math.floor(next() * 12);
  const w = Writer.create();
  switch (Math.floor(next() * 5)) {
    case 0:
      w.uint32(field << 3).uint64(Math.floor(next() * 2 ** 40));
      break;
    case 1:
      w.uint32((field << 3) | 1).fixed64(7);
      break;
    case 2:
      w.uint32((field << 3) | 2).bytes(Buffer.from([0xff, 0x08, 0x01]));
      break;
    case 3:
      w.uint32((field << 3) | 3)
        .uint32(8)
        .uint32(1)
        .uint32((field << 3) | 4);
      break;
    default:
      w.uint32((field << 3) | 5).fixed32(9);
  }
  return Buffer.from(w.finish());
}

const VARINT = 0;
const LEN = 2;

/** One of a message's known fields (`[number, its wire type]`) written with another wire type. */
function mistyped(next: () => number, known: [number, number][]): Buffer {
  const [field, own] = known[Math.floor(next() * known.length)];
  const w = Writer.create();
  if (own === LEN && next() < 0.5) w.uint32(field << 3).uint32(5);
  else if (own === VARINT && next() < 0.5) w.uint32((field << 3) | LEN).bytes(Buffer.from([0x08, 0x01]));
  else w.uint32((field << 3) | 5).fixed32(5);
  return Buffer.from(w.finish());
}

describe('reading a rate-limit request off the wire', () => {
  for (const [shape, service] of SERVICES) {
    const method = methodOf(service, 'ShouldRateLimit');
    const encode = (msg: object) => method.requestSerialize(msg);
    const protobufjs = (bytes: Buffer) => typedOf(method.requestDeserialize(bytes) as ProtoRequest);
    const decode = requestDecoder(shape, BOUNDS);

    it(`reads ${service} requests as proto-loader read them, over 3000 random ones`, () => {
      const next = random(17);
      for (let i = 0; i < 3000; i++) {
        const bytes = encode(randomRequest(next, shape));
        assert.deepEqual(decode(bytes), protobufjs(bytes), `request ${i}: ${bytes.toString('hex')}`);
      }
    });

    it(`skips, in ${service} requests, the fields protobuf-go skips wherever they are`, () => {
      const next = random(29);
      /** A message of `fields`, with noise of the message's own known `numbers` and unknown fields around and between them. */
      const noisy = (known: [number, number][], fields: Buffer[]) =>
        Buffer.concat([
          mistyped(next, known),
          ...fields.flatMap((f) => [f, unknownField(next)]),
          mistyped(next, known),
        ]);
      const delimited = (field: number, bytes: Buffer) =>
        Buffer.from(
          Writer.create()
            .uint32((field << 3) | 2)
            .bytes(bytes)
            .finish(),
        );
      const varint = (field: number, value: number) =>
        Buffer.from(
          Writer.create()
            .uint32(field << 3)
            .uint64(value)
            .finish(),
        );
      for (let i = 0; i < 500; i++) {
        const msg = randomRequest(next, shape);
        const descriptors = msg.descriptors.map((d) => {
          const fields = d.entries.map((e) =>
            delimited(
              1,
              noisy(
                [
                  [1, LEN],
                  [2, LEN],
                ],
                [delimited(1, Buffer.from(e.key)), delimited(2, Buffer.from(e.value))],
              ),
            ),
          );
          if (d.limit)
            fields.push(
              delimited(
                2,
                noisy(
                  [
                    [1, VARINT],
                    [2, VARINT],
                  ],
                  [varint(1, d.limit.requests_per_unit), varint(2, d.limit.unit as unknown as number)],
                ),
              ),
            );
          if (d.hits_addend) fields.push(delimited(3, noisy([[1, VARINT]], [varint(1, d.hits_addend.value)])));
          return delimited(
            2,
            noisy(
              shape === 'envoy'
                ? [
                    [1, LEN],
                    [2, LEN],
                    [3, LEN],
                  ]
                : [[1, LEN]],
              fields,
            ),
          );
        });
        const fields = [delimited(1, Buffer.from(msg.domain)), ...descriptors];
        if (msg.hits_addend) fields.push(varint(3, msg.hits_addend));
        const bytes = noisy(
          [
            [1, LEN],
            [2, LEN],
            [3, VARINT],
          ],
          fields,
        );
        assert.deepEqual(decode(bytes), protobufjs(encode(msg)), `request ${i}: ${bytes.toString('hex')}`);
      }
    });
  }

  it('reads the last of a field given twice, as protobufjs does, and a message field given twice as its last', () => {
    const decode = requestDecoder('envoy', BOUNDS);
    const w = Writer.create();
    w.uint32(10).string('first').uint32(10).string('second').uint32(24).uint32(4).uint32(24).uint32(0);
    const descriptor = Writer.create()
      .uint32(18)
      .bytes(Writer.create().uint32(8).uint32(10).uint32(16).uint32(2).finish())
      .uint32(18)
      .bytes(Writer.create().uint32(16).uint32(1).finish())
      .uint32(26)
      .bytes(Writer.create().uint32(8).uint64(3).finish())
      .finish();
    w.uint32(18).bytes(descriptor);
    const bytes = Buffer.from(w.finish());
    const expected = typedOf(methodOf(ENVOY_V3_SERVICE, 'ShouldRateLimit').requestDeserialize(bytes) as ProtoRequest);
    assert.deepEqual(decode(bytes), expected);
    assert.deepEqual(decode(bytes), {
      domain: 'second',
      descriptors: [{ entries: [], limit: { requestsPerUnit: 0, unit: 'SECOND' }, hitsAddend: 3 }],
    });
  });

  it('reads a hits_addend past 2^53 as proto-loader rounds it, for the service to refuse', () => {
    const decode = requestDecoder('envoy', BOUNDS);
    const bytes = Buffer.from(
      Writer.create()
        .uint32(18)
        .bytes(
          Writer.create().uint32(26).bytes(Writer.create().uint32(8).uint64('18446744073709551615').finish()).finish(),
        )
        .finish(),
    );
    assert.deepEqual(decode(bytes), {
      domain: '',
      descriptors: [{ entries: [], hitsAddend: Number(18446744073709551615n) }],
    });
  });
});

describe('a rate-limit request refused off the wire', () => {
  const bounds = { maxDescriptors: 3, maxDescriptorEntries: 2 };
  const encode = (msg: object) => methodOf(ENVOY_V3_SERVICE, 'ShouldRateLimit').requestSerialize(msg);
  const decode = requestDecoder('envoy', bounds);
  const refusal = (value: unknown) => (value as RefusedRequest)[REFUSED];
  const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ key: 'e', value: String(i) }));

  it('names the first descriptor with too many entries', () => {
    const bytes = encode({
      domain: 'd',
      descriptors: [{ entries: entries(1) }, { entries: entries(3) }, { entries: entries(5) }],
    });
    assert.equal(refusal(decode(bytes)), 'descriptors[1]: a descriptor carries at most 2 entries, this one 3');
  });

  it('counts descriptors first, as the service does', () => {
    const four = encode({
      domain: 'd',
      descriptors: [{ entries: entries(9) }, ...Array.from({ length: 3 }, () => ({ entries: [] }))],
    });
    assert.equal(refusal(decode(four)), 'a request carries at most 3 descriptors, this one 4');
    assert.deepEqual(decode(encode({ domain: 'd', descriptors: [{ entries: [] }] })), {
      domain: 'd',
      descriptors: [{ entries: [] }],
    });
  });

  it('counts the same field numbers in both services, and only the fields protobuf-go reads', () => {
    const lyft = methodOf(LYFT_SERVICE, 'ShouldRateLimit').requestSerialize({
      domain: 'd',
      hits_addend: 3,
      descriptors: [{ entries: entries(3) }],
    });
    assert.equal(
      refusal(requestDecoder('lyft', bounds)(lyft)),
      'descriptors[0]: a descriptor carries at most 2 entries, this one 3',
    );
    const three = encode({ domain: 'd', descriptors: Array.from({ length: 3 }, () => ({ entries: [] })) });
    // 10 05: field 2 (descriptors) as a varint; 6b 08 01 6c: field 13 as a group holding a varint, closed.
    const withOthers = Buffer.concat([three, Buffer.from([0x10, 0x05, 0x6b, 0x08, 0x01, 0x6c])]);
    assert.equal((decode(withOthers) as RateLimitRequest).descriptors.length, 3);
    assert.equal(
      refusal(decode(Buffer.concat([withOthers, encode({ descriptors: [{ entries: [] }] })]))),
      'a request carries at most 3 descriptors, this one 4',
    );
  });

  it('says a request over the bounds before it says a string is not UTF-8', () => {
    const w = Writer.create()
      .uint32(10)
      .bytes(Buffer.from([0xff]));
    const bytes = Buffer.concat([
      Buffer.from(w.finish()),
      encode({ descriptors: Array.from({ length: 4 }, () => ({ entries: [] })) }),
    ]);
    assert.equal(refusal(decode(bytes)), 'a request carries at most 3 descriptors, this one 4');
  });

  it('names the first string that is not UTF-8, a domain given twice included, as protobuf-go refuses it', () => {
    const twice = Buffer.concat([
      Buffer.from(
        Writer.create()
          .uint32(10)
          .bytes(Buffer.from([0x64, 0x80]))
          .finish(),
      ),
      encode({ domain: 'd' }),
    ]);
    assert.equal(refusal(decode(twice)), 'domain: is not UTF-8');
    const entry = (key: Buffer, value: Buffer) =>
      Writer.create().uint32(10).bytes(key).uint32(18).bytes(value).finish();
    const descriptor = Writer.create()
      .uint32(10)
      .bytes(entry(Buffer.from('k'), Buffer.from('ok')))
      .uint32(10)
      .bytes(entry(Buffer.from('k'), Buffer.from([0xc3])))
      .finish();
    const bytes = Buffer.from(Writer.create().uint32(10).string('d').uint32(18).bytes(descriptor).finish());
    assert.equal(refusal(decode(bytes)), 'descriptors[0].entries[1].value: is not UTF-8');
    // U+FFFD itself is UTF-8.
    assert.deepEqual(decode(encode({ domain: '\ufffd' })), { domain: '\ufffd', descriptors: [] });
  });

  it('throws on bytes that are no message: cut short, a length past the end, a group never closed, a wire type of none', () => {
    const whole = encode({ domain: 'domain', descriptors: [{ entries: entries(1) }] });
    for (let cut = 1; cut < whole.length; cut++) {
      const part = whole.subarray(0, cut);
      // Cut after the domain, what is left is a message.
      if (cut === 8) assert.deepEqual(decode(part), { domain: 'domain', descriptors: [] });
      else assert.throws(() => decode(part), RangeError, `cut at ${cut}`);
    }
    assert.throws(() => decode(Buffer.from([0x0a, 0x05, 0x64])), RangeError);
    assert.throws(() => decode(Buffer.from([0x6b, 0x08, 0x01])), RangeError);
    assert.throws(() => decode(Buffer.from([0x0e, 0x00])), RangeError);
    assert.throws(() => decode(Buffer.from([0x0c])), RangeError);
  });
});
