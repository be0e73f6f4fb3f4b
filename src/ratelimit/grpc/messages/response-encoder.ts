/**
 * @module ratelimit/grpc/messages/response-encoder
 * Writes the service's answers straight into one buffer, from the typed
 * answer the service gives. proto-loader's serializer needs them as plain
 * objects of the protos' shape, rebuilds each through protobufjs's
 * `fromObject` (each enum name looked up, each nested message made anew),
 * and its writer then makes an object for every field written, before the
 * bytes: more garbage and time, on every answer, than the rest of a
 * decision together. This encoder makes the buffer alone. The layout (field numbers, which of the two services has which
 * field) is read from the protos proto-loader has read, and the bytes are
 * protobufjs's own, field for field (the tests compare them). An answer with
 * dynamic metadata (a Struct), or with a unit the protos do not name, is
 * left to proto-loader's serializer.
 */
import type { CurrentLimit, DescriptorStatus, RateLimitResponse } from '../../types';
import { durationNanos, durationSeconds, responseToProto, type ProtoResponse } from './codec';
import { rateLimitProtos } from '../protos';

type Encode = (response: RateLimitResponse) => Buffer;

const VARINT = 0;
const LENGTH_DELIMITED = 2;

/** A message type as proto-loader describes it (a `DescriptorProto`, field names as written). */
interface MessageDescriptor {
  name: string;
  field: readonly { name: string; number: number }[];
  nestedType: readonly MessageDescriptor[];
  enumType: readonly { name: string; value: readonly { name: string; number: number }[] }[];
}

/** The message `fullName` of the protos proto-loader has already read. */
function messageOf(fullName: string): MessageDescriptor {
  const definition = rateLimitProtos()[fullName] as { type?: MessageDescriptor } | undefined;
  if (definition?.type?.field === undefined) throw new Error(`${fullName} is no message of the rate-limit protos`);
  return definition.type;
}

/** An enum of `type`'s, its numbers by name. */
function numbersOf(type: MessageDescriptor, enumName: string): ReadonlyMap<string, number> {
  const found = type.enumType.find((e) => e.name === enumName);
  if (found === undefined) throw new Error(`${type.name} has no enum ${enumName}`);
  return new Map(found.value.map((v) => [v.name, v.number]));
}

/** The key of `type`'s field `name` (field number and wire type), or 0 if the type has no such field. */
function keyOf(type: MessageDescriptor, name: string, wireType: number): number {
  const field = type.field.find((f) => f.name === name);
  if (field === undefined) return 0;
  // One byte: every field written here is numbered below 16.
  if (field.number >= 16)
    throw new Error(`${type.name}.${name} is numbered ${field.number}: its key takes more than a byte`);
  return (field.number << 3) | wireType;
}

/** The bytes of `value` (a whole number from 0 to 2^53) as a varint. */
function varintSize(value: number): number {
  let size = 1;
  while (value > 127) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

function writeVarint(buffer: Buffer, at: number, value: number): number {
  while (value > 127) {
    // `& 127` reads the low bits right up to 2^53: ToInt32 keeps them.
    buffer[at++] = (value & 127) | 128;
    value = Math.floor(value / 128);
  }
  buffer[at++] = value;
  return at;
}

/** The bytes a field of `size` bytes takes with its key and length. */
function delimited(size: number): number {
  return 1 + varintSize(size) + size;
}

/**
 * The encoder of `service`'s `RateLimitResponse` (`pb.lyft.ratelimit` or
 * `envoy.service.ratelimit.v3`), leaving to `general` (proto-loader's
 * serializer) what it does not write itself.
 */
export function responseEncoder(service: string, general: (response: ProtoResponse) => Buffer): Encode {
  const packageName = service.slice(0, service.lastIndexOf('.'));
  const response = messageOf(`${packageName}.RateLimitResponse`);
  // Nested in envoy's response, beside it in pb.lyft.ratelimit.
  const partOf = (name: string) =>
    response.nestedType.find((t) => t.name === name) ?? messageOf(`${packageName}.${name}`);
  const status = partOf('DescriptorStatus');
  const limit = partOf('RateLimit');
  const headersName = response.field.some((f) => f.name === 'response_headers_to_add')
    ? 'response_headers_to_add'
    : 'headers';
  const header = messageOf(
    headersName === 'response_headers_to_add' ? 'envoy.config.core.v3.HeaderValue' : `${packageName}.HeaderValue`,
  );
  const duration = messageOf('google.protobuf.Duration');
  const codes = numbersOf(response, 'Code');
  const units = numbersOf(limit, 'Unit');
  const OK = codes.get('OK')!;
  const OVER_LIMIT = codes.get('OVER_LIMIT')!;
  const codeOf = (code: string) => (code === 'OK' ? OK : OVER_LIMIT);

  const key = {
    overall: keyOf(response, 'overall_code', VARINT),
    statuses: keyOf(response, 'statuses', LENGTH_DELIMITED),
    headers: keyOf(response, headersName, LENGTH_DELIMITED),
    code: keyOf(status, 'code', VARINT),
    currentLimit: keyOf(status, 'current_limit', LENGTH_DELIMITED),
    remaining: keyOf(status, 'limit_remaining', VARINT),
    reset: keyOf(status, 'duration_until_reset', LENGTH_DELIMITED),
    perUnit: keyOf(limit, 'requests_per_unit', VARINT),
    unit: keyOf(limit, 'unit', VARINT),
    name: keyOf(limit, 'name', LENGTH_DELIMITED),
    headerKey: keyOf(header, 'key', LENGTH_DELIMITED),
    headerValue: keyOf(header, 'value', LENGTH_DELIMITED),
    seconds: keyOf(duration, 'seconds', VARINT),
    nanos: keyOf(duration, 'nanos', VARINT),
  };

  // Sizes, as protobufjs writes each field: a value that is not null, zeros included.
  const named = (limit: CurrentLimit) => key.name !== 0 && limit.name != null;
  const limitSize = (limit: CurrentLimit) =>
    1 +
    varintSize(limit.requestsPerUnit >>> 0) +
    1 +
    varintSize(units.get(limit.unit)!) +
    (named(limit) ? delimited(Buffer.byteLength(limit.name!)) : 0);
  const resetSize = (ms: number) => 1 + varintSize(durationSeconds(ms)) + 1 + varintSize(durationNanos(ms));
  const hasReset = (s: DescriptorStatus) => key.reset !== 0 && s.durationUntilResetMs !== undefined;
  const statusSize = (s: DescriptorStatus) =>
    1 +
    varintSize(codeOf(s.code)) +
    (s.currentLimit ? delimited(limitSize(s.currentLimit)) : 0) +
    1 +
    varintSize(s.limitRemaining >>> 0) +
    (hasReset(s) ? delimited(resetSize(s.durationUntilResetMs!)) : 0);
  const headerSize = (h: { key: string; value: string }) =>
    delimited(Buffer.byteLength(h.key)) + delimited(Buffer.byteLength(h.value));

  /** Whether every unit is one the protos have and every number one a varint here holds. */
  const writable = (r: RateLimitResponse): boolean => {
    if (r.dynamicMetadata) return false;
    const statuses = r.statuses;
    for (let i = 0; i < statuses.length; i++) {
      const s = statuses[i];
      if (!Number.isSafeInteger(s.limitRemaining)) return false;
      if (s.currentLimit && (!units.has(s.currentLimit.unit) || !Number.isSafeInteger(s.currentLimit.requestsPerUnit)))
        return false;
      const reset = hasReset(s) ? s.durationUntilResetMs! : undefined;
      if (reset !== undefined && !(Number.isSafeInteger(durationSeconds(reset)) && reset >= 0)) return false;
    }
    return true;
  };

  const writeString = (buffer: Buffer, at: number, fieldKey: number, value: string) => {
    buffer[at++] = fieldKey;
    at = writeVarint(buffer, at, Buffer.byteLength(value));
    return at + buffer.write(value, at);
  };
  const writeStatus = (buffer: Buffer, at: number, s: DescriptorStatus) => {
    buffer[at++] = key.statuses;
    at = writeVarint(buffer, at, statusSize(s));
    buffer[at++] = key.code;
    at = writeVarint(buffer, at, codeOf(s.code));
    const current = s.currentLimit;
    if (current) {
      buffer[at++] = key.currentLimit;
      at = writeVarint(buffer, at, limitSize(current));
      buffer[at++] = key.perUnit;
      at = writeVarint(buffer, at, current.requestsPerUnit >>> 0);
      buffer[at++] = key.unit;
      at = writeVarint(buffer, at, units.get(current.unit)!);
      if (named(current)) at = writeString(buffer, at, key.name, current.name!);
    }
    buffer[at++] = key.remaining;
    at = writeVarint(buffer, at, s.limitRemaining >>> 0);
    if (hasReset(s)) {
      const ms = s.durationUntilResetMs!;
      buffer[at++] = key.reset;
      at = writeVarint(buffer, at, resetSize(ms));
      buffer[at++] = key.seconds;
      at = writeVarint(buffer, at, durationSeconds(ms));
      buffer[at++] = key.nanos;
      at = writeVarint(buffer, at, durationNanos(ms));
    }
    return at;
  };

  return (r) => {
    if (!writable(r)) return general(responseToProto(r));
    const overall = codeOf(r.overallCode);
    const statuses = r.statuses;
    const headers = r.responseHeadersToAdd;
    let size = 1 + varintSize(overall);
    for (let i = 0; i < statuses.length; i++) size += delimited(statusSize(statuses[i]));
    if (headers !== undefined) for (const h of headers) size += delimited(headerSize(h));
    const buffer = Buffer.allocUnsafe(size);
    buffer[0] = key.overall;
    let at = writeVarint(buffer, 1, overall);
    for (let i = 0; i < statuses.length; i++) at = writeStatus(buffer, at, statuses[i]);
    if (headers !== undefined) {
      for (const h of headers) {
        buffer[at++] = key.headers;
        at = writeVarint(buffer, at, headerSize(h));
        at = writeString(buffer, at, key.headerKey, h.key);
        at = writeString(buffer, at, key.headerValue, h.value);
      }
    }
    return buffer;
  };
}
