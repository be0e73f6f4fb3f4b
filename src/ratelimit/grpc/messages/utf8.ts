/**
 * @module ratelimit/grpc/messages/utf8
 * The strings of a received `RateLimitRequest` that are not UTF-8. A proto3
 * string must be, and envoyproxy/ratelimit's Go server refuses one that is
 * not; protobufjs instead reads each bad byte as U+FFFD, so that values that
 * differ only there (`\xfe`, `\xfd`) would share one counter. The wire bytes
 * are read again only when a decoded string holds U+FFFD, which a request
 * of valid UTF-8 seldom does.
 */
import { isUtf8 } from 'node:buffer';
import { Reader } from 'protobufjs';
import type { ProtoRequest } from './codec';

/** Where a decoded request came from bytes that are not UTF-8: `descriptors[0].entries[1].value`. */
export const NOT_UTF8: unique symbol = Symbol('not UTF-8');

/** A decoded request, with where its first string that is not UTF-8 sits, if any. */
export type CheckedRequest = ProtoRequest & { [NOT_UTF8]?: string };

const LEN = 2;

function holdsReplacement(msg: ProtoRequest): boolean {
  if (msg.domain?.includes('\ufffd')) return true;
  for (const d of msg.descriptors ?? []) {
    for (const e of d.entries ?? []) if (e.key?.includes('\ufffd') || e.value?.includes('\ufffd')) return true;
  }
  return false;
}

/** Calls `each(field, bytes)` for the length-delimited fields of a message, skipping the others. */
function fields(bytes: Uint8Array, each: (field: number, value: Uint8Array) => string | undefined): string | undefined {
  const reader = Reader.create(bytes);
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if ((tag & 7) !== LEN) {
      reader.skipType(tag & 7);
      continue;
    }
    const found = each(tag >>> 3, reader.bytes());
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The path of the first string of a request's wire bytes that is not UTF-8 (same field numbers in both services). */
export function notUtf8Field(bytes: Uint8Array): string | undefined {
  let d = 0;
  return fields(bytes, (field, value) => {
    if (field === 1) return isUtf8(value) ? undefined : 'domain';
    if (field !== 2) return undefined;
    const descriptor = d++;
    let e = 0;
    return fields(value, (inDescriptor, entryBytes) => {
      if (inDescriptor !== 1) return undefined;
      const entry = e++;
      return fields(entryBytes, (inEntry, text) => {
        if ((inEntry === 1 || inEntry === 2) && !isUtf8(text)) return `descriptors[${descriptor}].entries[${entry}].${inEntry === 1 ? 'key' : 'value'}`;
        return undefined;
      });
    });
  });
}

/** Wraps a request deserializer so that a request with a string that is not UTF-8 says where. */
export function checkingUtf8(deserialize: (bytes: Buffer) => ProtoRequest): (bytes: Buffer) => CheckedRequest {
  return (bytes) => {
    const msg: CheckedRequest = deserialize(bytes);
    if (holdsReplacement(msg)) {
      let where: string | undefined;
      try {
        where = notUtf8Field(bytes);
      } catch {
        // Bytes that decoded once read the same again; nothing to add if not.
      }
      if (where !== undefined) msg[NOT_UTF8] = where;
    }
    return msg;
  };
}
