/**
 * @module ratelimit/grpc/wire-types
 * A `RateLimitRequest` whose known fields carry the wrong wire type, read
 * as protobuf-go (envoyproxy/ratelimit's) reads it: such a field is an
 * unknown field, and skipped. protobufjs instead reads a field by its
 * number alone: `08 01` (the key as a varint) became the one-byte string
 * after it, so that bytes no encoder writes were decided and counted as
 * another descriptor, and a second domain as a varint emptied the first.
 * The bytes are only walked when they are right, and copied without those
 * fields when they are not; bytes that are no message at all (a group
 * never closed) throw, as the decoder should.
 */
import { Reader, Writer } from 'protobufjs';

const VARINT = 0;
const LEN = 2;

/** The wire type of each known field of a message, and the messages its length-delimited fields hold. */
interface Shape {
  readonly wireTypes: Readonly<Record<number, number>>;
  readonly nested?: Readonly<Record<number, Shape>>;
}

const ENTRY: Shape = { wireTypes: { 1: LEN, 2: LEN } };
const LIMIT_OVERRIDE: Shape = { wireTypes: { 1: VARINT, 2: VARINT } };
const UINT64_VALUE: Shape = { wireTypes: { 1: VARINT } };

/** Which service's `RateLimitRequest`: pb.lyft.ratelimit's descriptor has no limit override or hits of its own. */
export type RequestShape = 'envoy' | 'lyft';

const REQUESTS: Readonly<Record<RequestShape, Shape>> = {
  envoy: {
    wireTypes: { 1: LEN, 2: LEN, 3: VARINT },
    nested: { 2: { wireTypes: { 1: LEN, 2: LEN, 3: LEN }, nested: { 1: ENTRY, 2: LIMIT_OVERRIDE, 3: UINT64_VALUE } } },
  },
  lyft: {
    wireTypes: { 1: LEN, 2: LEN, 3: VARINT },
    nested: { 2: { wireTypes: { 1: LEN }, nested: { 1: ENTRY } } },
  },
};

/** Where {@link readVarint} left off: the walk below allocates nothing. */
let cursor = 0;

/** The varint at `cursor`, which moves past it; -1 when the bytes end first or it is past 2^32. */
function readVarint(bytes: Uint8Array, end: number): number {
  let value = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (cursor >= end) return -1;
    const byte = bytes[cursor++];
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return value <= 0xffffffff ? value : -1;
  }
  return -1;
}

/**
 * Whether the message in `bytes` from `start` to `end` may hold a field
 * of the wrong wire type at some depth, or a group, which only the careful
 * walk below reads: the usual request is ruled out by this walk alone.
 */
function mayBeMistyped(bytes: Uint8Array, start: number, end: number, shape: Shape): boolean {
  cursor = start;
  while (cursor < end) {
    const tag = readVarint(bytes, end);
    if (tag < 0) return true;
    const wireType = tag & 7;
    const expected = shape.wireTypes[tag >>> 3];
    if (expected !== undefined && wireType !== expected) return true;
    if (wireType === VARINT) {
      if (readVarint(bytes, end) < 0) return true;
    } else if (wireType === LEN) {
      const length = readVarint(bytes, end);
      if (length < 0 || cursor + length > end) return true;
      const next = cursor + length;
      const nested = shape.nested?.[tag >>> 3];
      if (nested !== undefined && mayBeMistyped(bytes, cursor, next, nested)) return true;
      cursor = next;
    } else if (wireType === 1 || wireType === 5) {
      cursor += wireType === 1 ? 8 : 4;
      if (cursor > end) return true;
    } else {
      return true;
    }
  }
  return false;
}

/** `bytes` without the fields `shape` knows that have another wire type, at every depth; null when there are none. */
function withoutMistypedFields(bytes: Uint8Array, shape: Shape): Uint8Array | null {
  const reader = Reader.create(bytes);
  let kept: Uint8Array[] | null = null;
  let copied = 0;
  while (reader.pos < reader.len) {
    const start = reader.pos;
    const tag = reader.uint32();
    const field = tag >>> 3;
    const wireType = tag & 7;
    const expected = shape.wireTypes[field];
    if (expected !== undefined && wireType !== expected) {
      reader.skipType(wireType);
      (kept ??= []).push(bytes.subarray(copied, start));
      copied = reader.pos;
      continue;
    }
    const nested = wireType === LEN ? shape.nested?.[field] : undefined;
    if (nested === undefined) {
      reader.skipType(wireType);
      continue;
    }
    const length = reader.uint32();
    const valueStart = reader.pos;
    reader.skip(length);
    const inner = withoutMistypedFields(bytes.subarray(valueStart, valueStart + length), nested);
    if (inner === null) continue;
    (kept ??= []).push(bytes.subarray(copied, start), Writer.create().uint32(tag).uint32(inner.length).finish(), inner);
    copied = reader.pos;
  }
  if (kept === null) return null;
  kept.push(bytes.subarray(copied));
  return Buffer.concat(kept);
}

/**
 * Wraps a request deserializer so that it decodes a `RateLimitRequest`
 * as protobuf-go does where a known field has the wrong wire type, and
 * throws on bytes that are no message.
 */
export function readingWireTypes<T>(deserialize: (bytes: Buffer) => T, shape: RequestShape): (bytes: Buffer) => T {
  const request = REQUESTS[shape];
  return (bytes) => {
    if (!mayBeMistyped(bytes, 0, bytes.length, request)) return deserialize(bytes);
    const conforming = withoutMistypedFields(bytes, request);
    return deserialize(conforming === null ? bytes : Buffer.from(conforming.buffer, conforming.byteOffset, conforming.byteLength));
  };
}
