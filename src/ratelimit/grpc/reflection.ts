/**
 * @module ratelimit/grpc/reflection
 * Server reflection with file descriptors a reflection client can link.
 * proto-loader leaves the `dependency` list of the file descriptors it builds
 * empty, so a client like grpcurl cannot resolve a type defined in another
 * file (`.google.protobuf.Duration`, the envoy descriptor), and names map
 * entries unlike protoc. Both are put right here.
 */
import type * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import {
  FileDescriptorProto,
  type IDescriptorProto,
  type IEnumDescriptorProto,
  type IFileDescriptorProto,
} from 'protobufjs/ext/descriptor';
import { LOADER_OPTIONS, PROTO_FILES } from './protos';

type FileMessage = IFileDescriptorProto & { name: string };

function indexMessages(
  messages: readonly IDescriptorProto[] | undefined,
  scope: string,
  file: string,
  owner: Map<string, string>,
): void {
  for (const m of messages ?? []) {
    const name = `${scope}.${m.name}`;
    owner.set(name, file);
    indexMessages(m.nestedType, name, file, owner);
    indexEnums(m.enumType, name, file, owner);
  }
}

function indexEnums(
  enums: readonly IEnumDescriptorProto[] | undefined,
  scope: string,
  file: string,
  owner: Map<string, string>,
): void {
  for (const e of enums ?? []) owner.set(`${scope}.${e.name}`, file);
}

/** A type reference and the scope it was written in (relative names resolve from there outwards). */
type Reference = [name: string, scope: string];

function referencedTypes(messages: readonly IDescriptorProto[] | undefined, scope: string, out: Reference[]): void {
  for (const m of messages ?? []) {
    const inner = `${scope}.${m.name}`;
    for (const f of [...(m.field ?? []), ...(m.extension ?? [])]) {
      if (f.typeName) out.push([f.typeName, inner]);
      if (f.extendee) out.push([f.extendee, inner]);
    }
    referencedTypes(m.nestedType, inner, out);
  }
}

/** Where a reference points, with protobuf's scoping: `.a.b` is absolute, `b` is looked up from the innermost scope out. */
export function resolveReference(name: string, scope: string, known: ReadonlyMap<string, string>): string | undefined {
  if (name.startsWith('.')) return known.has(name) ? name : undefined;
  for (let s = scope; ; s = s.slice(0, s.lastIndexOf('.'))) {
    const candidate = `${s}.${name}`;
    if (known.has(candidate)) return candidate;
    if (s === '') return undefined;
  }
}

/** protoc's name for the entry message of a map field: `field_name` → `FieldNameEntry`. */
export function mapEntryName(field: string): string {
  return `${field.replace(/(?:^|_)([a-z0-9])/g, (_, c: string) => c.toUpperCase()).replace(/_/g, '')}Entry`;
}

/**
 * Gives map entry messages protoc's names: protobufjs names the entry of
 * `fields` `Fields`, which strict clients (protoc's and Go's descriptor
 * builders, hence grpcurl) refuse.
 */
function nameMapEntries(messages: readonly IDescriptorProto[] | undefined): void {
  for (const m of messages ?? []) {
    for (const nested of m.nestedType ?? []) {
      if (!nested.options?.mapEntry) continue;
      const field = m.field?.find(
        (f) => f.typeName === nested.name || f.typeName?.endsWith(`.${m.name}.${nested.name}`),
      );
      if (!field?.name) continue;
      const name = mapEntryName(field.name);
      field.typeName = name;
      nested.name = name;
    }
    nameMapEntries(m.nestedType);
  }
}

/** Puts protoc's map entry names and each file's dependency list into the descriptors. */
export function linkFiles(files: readonly FileMessage[]): void {
  for (const file of files) nameMapEntries(file.messageType);
  const owner = new Map<string, string>();
  for (const file of files) {
    const scope = file.package ? `.${file.package}` : '';
    indexMessages(file.messageType, scope, file.name, owner);
    indexEnums(file.enumType, scope, file.name, owner);
    for (const s of file.service ?? []) owner.set(`${scope}.${s.name}`, file.name);
  }
  for (const file of files) {
    const scope = file.package ? `.${file.package}` : '';
    const refs: Reference[] = [];
    referencedTypes(file.messageType, scope, refs);
    for (const s of file.service ?? []) {
      for (const m of s.method ?? []) {
        if (m.inputType) refs.push([m.inputType, `${scope}.${s.name}`]);
        if (m.outputType) refs.push([m.outputType, `${scope}.${s.name}`]);
      }
    }
    const deps = new Set<string>();
    for (const [name, from] of refs) {
      const target = resolveReference(name, from, owner);
      const where = target === undefined ? undefined : owner.get(target);
      if (where !== undefined && where !== file.name) deps.add(where);
    }
    file.dependency = [...deps].sort();
  }
}

/** The file descriptors of a type definition; services have none of their own. */
function protosOf(entry: unknown): Buffer[] | undefined {
  const protos = (entry as { fileDescriptorProtos?: unknown }).fileDescriptorProtos;
  return Array.isArray(protos) ? (protos as Buffer[]) : undefined;
}

/** The package definition with linkable file descriptors. */
export function withLinkedFiles(definition: protoLoader.PackageDefinition): protoLoader.PackageDefinition {
  const byName = new Map<string, FileMessage>();
  for (const entry of Object.values(definition)) {
    for (const bin of protosOf(entry) ?? []) {
      const file = FileDescriptorProto.decode(bin) as unknown as FileMessage;
      if (!byName.has(file.name)) byName.set(file.name, file);
    }
  }
  linkFiles([...byName.values()]);
  const encoded = new Map<string, Buffer>();
  for (const [name, file] of byName) encoded.set(name, Buffer.from(FileDescriptorProto.encode(file as never).finish()));
  const out: protoLoader.PackageDefinition = {};
  for (const [key, entry] of Object.entries(definition)) {
    const protos = protosOf(entry);
    out[key] = protos
      ? ({
          ...entry,
          fileDescriptorProtos: protos.map((bin) =>
            encoded.get((FileDescriptorProto.decode(bin) as unknown as FileMessage).name)!,
          ),
        } as typeof entry)
      : entry;
  }
  return out;
}

/** Adds reflection (v1alpha and v1) over the rate-limit and health protos, and the reflection protos themselves. */
export function addReflection(server: Pick<grpc.Server, 'addService'>): void {
  const files = [...PROTO_FILES];
  for (const version of ['v1alpha', 'v1']) {
    try {
      files.push(require.resolve(`@grpc/reflection/build/proto/grpc/reflection/${version}/reflection.proto`));
    } catch {
      // Listing the reflection services themselves is a nicety.
    }
  }
  new ReflectionService(withLinkedFiles(protoLoader.loadSync(files, LOADER_OPTIONS))).addToServer(server);
}
