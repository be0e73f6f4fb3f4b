/**
 * @module ratelimit/grpc/messages/request-bytes
 * What a received `RateLimitRequest`'s wire bytes hold, read once before
 * protobufjs decodes them: how many descriptors and entries they carry,
 * against the service's bounds, and whether a known field has the wrong
 * wire type (./wire-types). Decoding builds an object for every entry, and
 * 300,000 entries in one descriptor (3.9 MB) held the event loop, and every
 * HTTP request with it, for seconds; a request past the bounds is refused
 * from the count alone, in the words the service refuses a decoded one with.
 * The walk allocates nothing: the usual request pays one pass over its bytes.
 */
import { descriptorsOverBound, entriesOverBound, type RequestBounds } from '../../bounds';
import { LEN, REQUEST_SHAPES, VARINT, withoutMistypedFields, type RequestShape, type Shape } from './wire-types';

/** Where a received request says why it was refused unread. */
export const OVER_BOUNDS: unique symbol = Symbol('over bounds');

/** What the deserializer gives for a request over the bounds, in place of the request. */
export interface RefusedRequest {
  readonly [OVER_BOUNDS]: string;
}

/** Field numbers, the same in `pb.lyft.ratelimit` and envoy v3. */
const REQUEST_DESCRIPTORS = 2;
const DESCRIPTOR_ENTRIES = 1;

const REQUEST = 0;
const DESCRIPTOR = 1;

/** The walk's state: module-wide, so that reading allocates nothing (it never yields). */
let cursor = 0;
let descriptors = 0;
let entries = 0;
let firstWide = -1;
let firstWideEntries = 0;
let maxEntries = 0;
let mistyped = false;

/** The varint at `cursor`, which moves past it; -1 when the bytes end first or it is past 2^32 (a tag or a length). */
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

/** Moves `cursor` past a field's value of `wireType`; false when the bytes cannot be read so. */
function skipValue(bytes: Uint8Array, end: number, wireType: number): boolean {
  switch (wireType) {
    case VARINT:
      for (let i = 0; i < 10; i++) {
        if (cursor >= end) return false;
        if (bytes[cursor++] < 0x80) return true;
      }
      return false;
    case 1:
    case 5:
      cursor += wireType === 1 ? 8 : 4;
      return cursor <= end;
    case LEN: {
      const length = readVarint(bytes, end);
      cursor += length;
      return length >= 0 && cursor <= end;
    }
    case 3:
      // A group, skipped up to its end as protobufjs skips it.
      for (;;) {
        const tag = readVarint(bytes, end);
        if (tag < 0) return false;
        if ((tag & 7) === 4) return true;
        if (!skipValue(bytes, end, tag & 7)) return false;
      }
    default:
      return false;
  }
}

/** Walks the message from `cursor` to `end`, counting at `level`; false when the bytes cannot be read. */
function walkMessage(bytes: Uint8Array, end: number, shape: Shape, level: number): boolean {
  while (cursor < end) {
    const tag = readVarint(bytes, end);
    if (tag < 0) return false;
    const field = tag >>> 3;
    const wireType = tag & 7;
    const expected = shape.wireTypes[field];
    if (expected !== undefined && wireType !== expected) mistyped = true;
    else if (wireType === LEN && shape.nested?.[field] !== undefined) {
      const length = readVarint(bytes, end);
      if (length < 0 || cursor + length > end) return false;
      const next = cursor + length;
      if (level === REQUEST && field === REQUEST_DESCRIPTORS) {
        descriptors++;
        entries = 0;
      } else if (level === DESCRIPTOR && field === DESCRIPTOR_ENTRIES) {
        entries++;
      }
      if (!walkMessage(bytes, next, shape.nested[field], level + 1)) return false;
      if (level === REQUEST && field === REQUEST_DESCRIPTORS && entries > maxEntries && firstWide < 0) {
        firstWide = descriptors - 1;
        firstWideEntries = entries;
      }
      continue;
    }
    if (!skipValue(bytes, end, wireType)) return false;
  }
  return true;
}

const WITHIN = 0;
const MISTYPED = 1;
const UNREADABLE = 2;

/** What one walk over a request's bytes found: one of the three above, or why it is over `bounds`. */
function walkRequest(bytes: Uint8Array, bounds: RequestBounds, shape: Shape): number | string {
  cursor = 0;
  descriptors = 0;
  entries = 0;
  firstWide = -1;
  maxEntries = bounds.maxDescriptorEntries;
  mistyped = false;
  if (!walkMessage(bytes, bytes.length, shape, REQUEST)) return UNREADABLE;
  if (descriptors > bounds.maxDescriptors) return descriptorsOverBound(bounds, descriptors);
  if (firstWide >= 0) return entriesOverBound(bounds, firstWide, firstWideEntries);
  return mistyped ? MISTYPED : WITHIN;
}

/**
 * Why a request's bytes carry more than `bounds` allow, counting only the
 * fields protobuf-go reads (of the right wire type); `undefined` when they
 * do not. Throws on bytes that are no protobuf message.
 */
export function overBounds(bytes: Uint8Array, bounds: RequestBounds, shape: RequestShape = 'envoy'): string | undefined {
  const found = walkRequest(bytes, bounds, REQUEST_SHAPES[shape]);
  if (found === UNREADABLE) throw new RangeError('the bytes are no protobuf message');
  return typeof found === 'string' ? found : undefined;
}

/**
 * Wraps a request deserializer: a request over `bounds` is not decoded but
 * becomes a {@link RefusedRequest}, which the handler answers with
 * INVALID_ARGUMENT; one with a known field of the wrong wire type is decoded
 * without it, as protobuf-go reads it; bytes the walk cannot read go to the
 * decoder as they are, to be refused as it refuses them.
 */
export function readingRequestBytes<T>(deserialize: (bytes: Buffer) => T, bounds: RequestBounds, shape: RequestShape): (bytes: Buffer) => T | RefusedRequest {
  const request = REQUEST_SHAPES[shape];
  return (bytes) => {
    const found = walkRequest(bytes, bounds, request);
    if (found === WITHIN) return deserialize(bytes);
    if (typeof found === 'string') return { [OVER_BOUNDS]: found };
    const conforming = withoutMistypedFields(bytes, request);
    return deserialize(conforming === null ? bytes : Buffer.from(conforming.buffer, conforming.byteOffset, conforming.byteLength));
  };
}
