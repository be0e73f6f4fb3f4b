/**
 * @module ratelimit/grpc/bounds
 * Refusing a `RateLimitRequest` that carries more than the service takes,
 * from its wire bytes, before protobufjs decodes it: decoding builds an
 * object for every entry, and 300,000 entries in one descriptor (3.9 MB)
 * held the event loop, and every HTTP request with it, for seconds. Counting
 * skips over the strings, so a request within the bounds costs a few
 * microseconds more, and one past them nothing but the count.
 */
import { Reader } from 'protobufjs';
import { descriptorsOverBound, entriesOverBound, type RequestBounds } from '../bounds';

/** Where a received request says why it was refused unread. */
export const OVER_BOUNDS: unique symbol = Symbol('over bounds');

/** What the deserializer gives for a request over the bounds, in place of the request. */
export interface RefusedRequest {
  readonly [OVER_BOUNDS]: string;
}

const LEN = 2;
/** Field numbers, the same in `pb.lyft.ratelimit` and envoy v3. */
const REQUEST_DESCRIPTORS = 2;
const DESCRIPTOR_ENTRIES = 1;

/** How many times `field` occurs, length-delimited, in a message's bytes: its values are skipped, not read. */
function countField(bytes: Uint8Array, field: number): number {
  const reader = Reader.create(bytes);
  let count = 0;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 === field && (tag & 7) === LEN) {
      reader.skip(reader.uint32());
      count++;
    } else {
      reader.skipType(tag & 7);
    }
  }
  return count;
}

/** The first problem `check` finds in the values of `field`, given with their index. */
function findInField(bytes: Uint8Array, field: number, check: (value: Uint8Array, index: number) => string | undefined): string | undefined {
  const reader = Reader.create(bytes);
  let index = 0;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 !== field || (tag & 7) !== LEN) {
      reader.skipType(tag & 7);
      continue;
    }
    const problem = check(reader.bytes(), index++);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * Why a request's bytes carry more than `bounds` allow, in the words the
 * service refuses a decoded one with; `undefined` when they do not. Throws
 * on bytes that are no protobuf message (the decoder would throw too).
 */
export function overBounds(bytes: Uint8Array, bounds: RequestBounds): string | undefined {
  const descriptors = countField(bytes, REQUEST_DESCRIPTORS);
  if (descriptors > bounds.maxDescriptors) return descriptorsOverBound(bounds, descriptors);
  return findInField(bytes, REQUEST_DESCRIPTORS, (descriptor, i) => {
    const entries = countField(descriptor, DESCRIPTOR_ENTRIES);
    return entries > bounds.maxDescriptorEntries ? entriesOverBound(bounds, i, entries) : undefined;
  });
}

/**
 * Wraps a request deserializer so that a request over `bounds` is not
 * decoded: it becomes a {@link RefusedRequest}, which the handler answers
 * with INVALID_ARGUMENT.
 */
export function refusingOverBounds<T>(deserialize: (bytes: Buffer) => T, bounds: RequestBounds): (bytes: Buffer) => T | RefusedRequest {
  return (bytes) => {
    let problem: string | undefined;
    try {
      problem = overBounds(bytes, bounds);
    } catch {
      // Not a message at all: the decoder says so as it does for any such bytes.
    }
    return problem === undefined ? deserialize(bytes) : { [OVER_BOUNDS]: problem };
  };
}
