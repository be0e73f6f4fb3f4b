/**
 * @module ratelimit/grpc/messages/request-decoder
 * Reads a `RateLimitRequest`'s wire bytes straight into the service's typed
 * request, in one pass, as protobuf-go (envoyproxy/ratelimit's) reads them:
 * - a known field of the wrong wire type is an unknown field, and skipped
 *   (protobufjs reads a field by its number alone: `08 01`, a key written
 *   as a varint, would become the one-byte string after it);
 * - a string that is not UTF-8 refuses the request, naming the first such
 *   field (protobufjs reads each bad byte as U+FFFD: values differing only
 *   there would share one counter);
 * - past the service's bounds, the request is refused from its counts, with
 *   no object made for the entries past them: a few megabytes of entries
 *   would otherwise hold the event loop while they were decoded;
 * - bytes that are no message throw, as a decoder does (grpc-js answers
 *   INTERNAL).
 * Otherwise it reads what protobufjs's decoder and proto-loader's plain
 * objects make of the bytes (last of a repeated scalar or message wins,
 * enum names as the protos spell them, unknown numbers as numbers), which
 * the tests compare, without the objects and copies of a general decoder:
 * it runs on every call. Strings are read by src/platform's `utf8Text`.
 */
import { descriptorsOverBound, entriesOverBound, type RequestBounds } from '../../bounds';
import type { DescriptorEntry, RateLimitDescriptor, RateLimitRequest, RateLimitUnit } from '../../types';
import { utf8Text } from '../../../platform';
import { rateLimitProtos } from '../protos';

/** Where a request the decoder refused says why, in place of the request. */
export const REFUSED: unique symbol = Symbol('refused request');

/** What the decoder gives for a request it refuses (INVALID_ARGUMENT, with these details). */
export interface RefusedRequest {
  readonly [REFUSED]: string;
}

/** Which service's request: pb.lyft.ratelimit's descriptor has entries only. */
export type RequestShape = 'envoy' | 'lyft';

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const GROUP_START = 3;
const GROUP_END = 4;
const FIXED32 = 5;

/** The read position in the bytes being decoded: module-wide, as a decode runs to its end without yielding. */
let pos = 0;

function unreadable(): never {
  throw new RangeError('the bytes are no RateLimitRequest');
}

/** A varint of at most 10 bytes, as protobufjs reads a uint32: its low 32 bits, unsigned. */
function uint32(bytes: Buffer, end: number): number {
  let value = 0;
  for (let shift = 0; shift < 70; shift += 7) {
    if (pos >= end) unreadable();
    const byte = bytes[pos++];
    if (shift < 32) value |= (byte & 0x7f) << shift;
    if (byte < 0x80) return value >>> 0;
  }
  return unreadable();
}

/** A tag or a length: a varint that must fit 32 bits. */
function size(bytes: Buffer, end: number): number {
  let value = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (pos >= end) unreadable();
    const byte = bytes[pos++];
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return value <= 0xffffffff ? value : unreadable();
  }
  return unreadable();
}

/** A uint64 varint as a number (proto-loader's `longs: Number`): exact up to 2^53, rounded past it. */
function uint64(bytes: Buffer, end: number): number {
  let low = 0;
  let high = 0;
  for (let shift = 0; shift < 70; shift += 7) {
    if (pos >= end) unreadable();
    const byte = bytes[pos++];
    const bits = byte & 0x7f;
    if (shift < 28) low |= bits << shift;
    else if (shift === 28) {
      low |= bits << 28;
      high |= bits >>> 4;
    } else if (shift < 64) high |= bits << (shift - 32);
    if (byte < 0x80) return (low >>> 0) + (high >>> 0) * 0x100000000;
  }
  return unreadable();
}

/** The end of a length-delimited value starting at `pos` (which moves past its length). */
function delimitedEnd(bytes: Buffer, end: number): number {
  const length = size(bytes, end);
  const valueEnd = pos + length;
  return valueEnd <= end ? valueEnd : unreadable();
}

/** Moves past a value of `wireType`, as protobufjs skips one. */
function skip(bytes: Buffer, end: number, wireType: number): void {
  switch (wireType) {
    case VARINT:
      uint32(bytes, end);
      return;
    case FIXED64:
      pos += 8;
      break;
    case LEN:
      pos = delimitedEnd(bytes, end);
      return;
    case GROUP_START:
      for (;;) {
        const tag = size(bytes, end);
        if ((tag & 7) === GROUP_END) return;
        skip(bytes, end, tag & 7);
      }
    case FIXED32:
      pos += 4;
      break;
    default:
      unreadable();
  }
  if (pos > end) unreadable();
}

/** What one decode found besides the request: module-wide, for the same reason as `pos`. */
let notUtf8: string | undefined;
let descriptorCount = 0;
let wide = -1;
let wideEntries = 0;

/** An entry of descriptor `d` (its `e`th), or undefined when a string of it is not UTF-8. */
function readEntry(bytes: Buffer, end: number, d: number, e: number, keep: boolean): DescriptorEntry | undefined {
  let key = '';
  let value = '';
  while (pos < end) {
    const tag = size(bytes, end);
    const field = tag >>> 3;
    if ((field === 1 || field === 2) && (tag & 7) === LEN) {
      const valueEnd = delimitedEnd(bytes, end);
      if (keep) {
        const read = utf8Text(bytes, pos, valueEnd);
        if (read === undefined) notUtf8 ??= `descriptors[${d}].entries[${e}].${field === 1 ? 'key' : 'value'}`;
        else if (field === 1) key = read;
        else value = read;
      }
      pos = valueEnd;
    } else skip(bytes, end, tag & 7);
  }
  return keep ? { key, value } : undefined;
}

/** The request-level code of a decoder: the names of envoy's `RateLimitUnit`, by number. */
type UnitNames = ReadonlyMap<number, RateLimitUnit>;

/** A descriptor's `limit` (RateLimitOverride): its count, and its unit by name (or number, when the protos name none). */
function readOverride(bytes: Buffer, end: number, units: UnitNames): NonNullable<RateLimitDescriptor['limit']> {
  let requestsPerUnit = 0;
  let unit = 0;
  while (pos < end) {
    const tag = size(bytes, end);
    const field = tag >>> 3;
    if ((field === 1 || field === 2) && (tag & 7) === VARINT) {
      const read = uint32(bytes, end);
      if (field === 1) requestsPerUnit = read;
      else unit = read | 0;
    } else skip(bytes, end, tag & 7);
  }
  // An unknown unit goes through as it came: the service refuses it rather than apply the configured limit.
  return { requestsPerUnit, unit: units.get(unit) ?? (unit as unknown as RateLimitUnit) };
}

/** A descriptor's `hits_addend` (a UInt64Value). */
function readUint64Value(bytes: Buffer, end: number): number {
  let value = 0;
  while (pos < end) {
    const tag = size(bytes, end);
    if (tag >>> 3 === 1 && (tag & 7) === VARINT) value = uint64(bytes, end);
    else skip(bytes, end, tag & 7);
  }
  return value;
}

/** Descriptor `d`; its entries are kept while `keep` and within the bounds. */
function readDescriptor(
  bytes: Buffer,
  end: number,
  d: number,
  envoy: boolean,
  bounds: RequestBounds,
  units: UnitNames,
  keep: boolean,
): RateLimitDescriptor {
  const entries: DescriptorEntry[] = [];
  let limit: RateLimitDescriptor['limit'];
  let hitsAddend: number | undefined;
  let count = 0;
  while (pos < end) {
    const tag = size(bytes, end);
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (field === 1 && wireType === LEN) {
      const entryEnd = delimitedEnd(bytes, end);
      count++;
      const entry = readEntry(bytes, entryEnd, d, count - 1, keep && count <= bounds.maxDescriptorEntries);
      if (entry !== undefined) entries.push(entry);
      pos = entryEnd;
    } else if (envoy && field === 2 && wireType === LEN) {
      limit = readOverride(bytes, delimitedEnd(bytes, end), units);
    } else if (envoy && field === 3 && wireType === LEN) {
      hitsAddend = readUint64Value(bytes, delimitedEnd(bytes, end));
    } else skip(bytes, end, wireType);
  }
  if (count > bounds.maxDescriptorEntries && wide < 0) {
    wide = d;
    wideEntries = count;
  }
  // One shape, whichever fields came, in whatever order.
  const descriptor: RateLimitDescriptor = { entries };
  if (limit !== undefined) descriptor.limit = limit;
  if (hitsAddend !== undefined) descriptor.hitsAddend = hitsAddend;
  return descriptor;
}

/** The names of envoy's `RateLimitUnit` by number, from the protos proto-loader has read. */
function unitNames(): UnitNames {
  const definition = rateLimitProtos()['envoy.type.v3.RateLimitUnit'] as
    { type?: { value?: readonly { name: string; number: number }[] } } | undefined;
  const values = definition?.type?.value;
  if (values === undefined) throw new Error('envoy.type.v3.RateLimitUnit is no enum of the rate-limit protos');
  return new Map(values.map((v) => [v.number, v.name as RateLimitUnit]));
}

/**
 * The decoder of `shape`'s `RateLimitRequest` (the same field numbers in
 * both services): the typed request, or a {@link RefusedRequest} saying why
 * it is refused. Throws on bytes that are no message.
 */
export function requestDecoder(
  shape: RequestShape,
  bounds: RequestBounds,
): (bytes: Buffer) => RateLimitRequest | RefusedRequest {
  const envoy = shape === 'envoy';
  const units = unitNames();
  return (bytes) => {
    pos = 0;
    notUtf8 = undefined;
    descriptorCount = 0;
    wide = -1;
    const end = bytes.length;
    const descriptors: RateLimitDescriptor[] = [];
    let domain = '';
    let hitsAddend = 0;
    while (pos < end) {
      const tag = size(bytes, end);
      const field = tag >>> 3;
      const wireType = tag & 7;
      if (field === 1 && wireType === LEN) {
        const valueEnd = delimitedEnd(bytes, end);
        const read = utf8Text(bytes, pos, valueEnd);
        if (read === undefined) notUtf8 ??= 'domain';
        else domain = read;
        pos = valueEnd;
      } else if (field === 2 && wireType === LEN) {
        const descriptorEnd = delimitedEnd(bytes, end);
        const d = descriptorCount++;
        // Past the bounds, descriptors are only counted: the request is refused.
        const keep = descriptorCount <= bounds.maxDescriptors && wide < 0;
        const descriptor = readDescriptor(bytes, descriptorEnd, d, envoy, bounds, units, keep);
        if (keep) descriptors.push(descriptor);
        pos = descriptorEnd;
      } else if (field === 3 && wireType === VARINT) {
        hitsAddend = uint32(bytes, end);
      } else skip(bytes, end, wireType);
    }
    if (descriptorCount > bounds.maxDescriptors) return { [REFUSED]: descriptorsOverBound(bounds, descriptorCount) };
    if (wide >= 0) return { [REFUSED]: entriesOverBound(bounds, wide, wideEntries) };
    if (notUtf8 !== undefined) return { [REFUSED]: `${notUtf8}: is not UTF-8` };
    const request: RateLimitRequest = { domain, descriptors };
    if (hitsAddend !== 0) request.hitsAddend = hitsAddend;
    return request;
  };
}
