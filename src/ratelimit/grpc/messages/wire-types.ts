/**
 * @module ratelimit/grpc/messages/wire-types
 * A `RateLimitRequest` whose known fields carry the wrong wire type, read
 * as protobuf-go (envoyproxy/ratelimit's) reads it: such a field is an
 * unknown field, and skipped. protobufjs instead reads a field by its
 * number alone: `08 01` (the key as a varint) became the one-byte string
 * after it, so that bytes no encoder writes were decided and counted as
 * another descriptor, and a second domain as a varint emptied the first.
 * ./request-bytes finds such fields in its one walk over a request; they
 * are copied out here, and bytes that are no message at all (a group never
 * closed) throw, as the decoder should.
 */
import { Reader, Writer } from 'protobufjs';

export const VARINT = 0;
export const LEN = 2;

/** The wire type of each known field of a message, and the messages its length-delimited fields hold. */
export interface Shape {
  readonly wireTypes: Readonly<Record<number, number>>;
  readonly nested?: Readonly<Record<number, Shape>>;
}

const ENTRY: Shape = { wireTypes: { 1: LEN, 2: LEN } };
const LIMIT_OVERRIDE: Shape = { wireTypes: { 1: VARINT, 2: VARINT } };
const UINT64_VALUE: Shape = { wireTypes: { 1: VARINT } };

/** Which service's `RateLimitRequest`: pb.lyft.ratelimit's descriptor has no limit override or hits of its own. */
export type RequestShape = 'envoy' | 'lyft';

export const REQUEST_SHAPES: Readonly<Record<RequestShape, Shape>> = {
  envoy: {
    wireTypes: { 1: LEN, 2: LEN, 3: VARINT },
    nested: { 2: { wireTypes: { 1: LEN, 2: LEN, 3: LEN }, nested: { 1: ENTRY, 2: LIMIT_OVERRIDE, 3: UINT64_VALUE } } },
  },
  lyft: {
    wireTypes: { 1: LEN, 2: LEN, 3: VARINT },
    nested: { 2: { wireTypes: { 1: LEN }, nested: { 1: ENTRY } } },
  },
};

/** `bytes` without the fields `shape` knows that have another wire type, at every depth; null when there are none. */
export function withoutMistypedFields(bytes: Uint8Array, shape: Shape): Uint8Array | null {
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
