/**
 * @module ratelimit/grpc/messages/struct
 * `google.protobuf.Struct` (envoy's `dynamic_metadata`) to and from plain
 * JSON values, as proto-loader gives its messages. proto-loader takes the
 * well-known types from protobufjs, whose fields are camelCase whatever
 * `keepCase` says; the `kind` oneof is named, `NULL_VALUE` is a string.
 */
import type { MetadataValue } from '../../types';

/** A `google.protobuf.Value` as proto-loader reads and writes it. */
export interface ProtoValue {
  kind?: string;
  nullValue?: string | number;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: ProtoStruct | null;
  listValue?: { values?: ProtoValue[] } | null;
}

export interface ProtoStruct {
  fields?: Record<string, ProtoValue>;
}

/** The Struct of a plain object; a field holding `undefined` is left out. */
export function toProtoStruct(object: { [key: string]: MetadataValue | undefined }): ProtoStruct {
  const fields: Record<string, ProtoValue> = {};
  for (const key of Object.keys(object)) {
    const value = object[key];
    if (value !== undefined) fields[key] = toProtoValue(value);
  }
  return { fields };
}

function toProtoValue(value: MetadataValue): ProtoValue {
  if (value === null) return { nullValue: 'NULL_VALUE' };
  switch (typeof value) {
    case 'number':
      return { numberValue: value };
    case 'string':
      return { stringValue: value };
    case 'boolean':
      return { boolValue: value };
    default:
      return Array.isArray(value)
        ? { listValue: { values: value.map(toProtoValue) } }
        : { structValue: toProtoStruct(value) };
  }
}

/** The plain object of a received Struct. */
export function fromProtoStruct(struct: ProtoStruct): { [key: string]: MetadataValue } {
  const out: { [key: string]: MetadataValue } = {};
  for (const [key, value] of Object.entries(struct.fields ?? {})) {
    // A key like `__proto__` is data here, not the object's prototype.
    Object.defineProperty(out, key, {
      value: fromProtoValue(value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function fromProtoValue(value: ProtoValue): MetadataValue {
  switch (value.kind) {
    case 'numberValue':
      return Number(value.numberValue);
    case 'stringValue':
      return value.stringValue ?? '';
    case 'boolValue':
      return value.boolValue === true;
    case 'structValue':
      return fromProtoStruct(value.structValue ?? {});
    case 'listValue':
      return (value.listValue?.values ?? []).map(fromProtoValue);
    default:
      return null;
  }
}
