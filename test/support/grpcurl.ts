/**
 * @module test/support/grpcurl
 * The grpcurl and `buf curl` commands of the docs, made with grpc-js, as
 * neither is installed offline: a listing through server reflection, a
 * call with `-d` by its full method name. The `-d` JSON is held against the request's message type
 * field by field, as grpcurl holds it, so that a field the protos no longer
 * have fails instead of being dropped.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { grpcClients, listServices, unary, type Clients } from './grpc-clients';
import { REPO_ROOT } from './process';

const PROTO_DIR = join(REPO_ROOT, 'proto');
const PROTOS = [
  'envoy/service/ratelimit/v3/rls.proto',
  'pb/lyft/ratelimit/ratelimit.proto',
  'grpc/health/v1/health.proto',
];

/** The client of each service grpcurl may be told to call. */
const CLIENT_OF: Readonly<Record<string, keyof Omit<Clients, 'close'>>> = {
  'envoy.service.ratelimit.v3.RateLimitService': 'envoy',
  'pb.lyft.ratelimit.RateLimitService': 'lyft',
  'grpc.health.v1.Health': 'health',
};

let root: protobuf.Root | undefined;

/** The protos as written (field names as in the .proto files). */
function protos(): protobuf.Root {
  if (!root) {
    root = new protobuf.Root();
    root.resolvePath = (_origin, target) => join(PROTO_DIR, target);
    root.loadSync(PROTOS, { keepCase: true });
    root.resolveAll();
  }
  return root;
}

const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** Asserts that every key of `value` is a field of `type` (by its proto or JSON name), at every depth. */
function assertFields(type: protobuf.Type, value: unknown, path: string): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => assertFields(type, item, `${path}[${i}]`));
    return;
  }
  assert.ok(
    typeof value === 'object' && value !== null,
    `${path}: ${type.fullName} is a message, not ${JSON.stringify(value)}`,
  );
  for (const [key, inner] of Object.entries(value)) {
    const field = Object.values(type.fields).find((f) => f.name === key || camel(f.name) === key);
    assert.ok(field, `${path}.${key}: ${type.fullName} has no such field`);
    const nested = field.resolvedType;
    // Well-known wrappers are plain values in JSON.
    if (nested instanceof protobuf.Type && !nested.fullName.startsWith('.google.protobuf.'))
      assertFields(nested, inner, `${path}.${key}`);
  }
}

/** What a command asks: the address, `list` or `<service>/<method>`, and the request. */
interface Call {
  address: string;
  what: string;
  data?: unknown;
}

/** `grpcurl -plaintext [-d <json>] <address> list|<service>/<method>`. */
function grpcurlCall(words: readonly string[]): Call {
  const args = words.slice(1);
  assert.equal(args.shift(), '-plaintext', 'the rate-limit service speaks plaintext gRPC');
  let data: unknown;
  if (args[0] === '-d') {
    args.shift();
    data = JSON.parse(args.shift()!);
  }
  const [address, what, ...extra] = args;
  assert.deepEqual(extra, [], `grpcurl ${words.join(' ')}`);
  return { address, what, data };
}

/**
 * `npx @bufbuild/buf curl --protocol grpc --http2-prior-knowledge [-d <json>]
 * http://<address>/<service>/<method>`, or `--list-methods http://<address>`.
 */
function bufCurlCall(words: readonly string[]): Call {
  assert.deepEqual(words.slice(0, 3), ['npx', '@bufbuild/buf', 'curl']);
  const args = words.slice(3);
  const flag = (name: string) => {
    const at = args.indexOf(name);
    assert.ok(at >= 0, `${words.join(' ')}: ${name} is needed`);
    return args.splice(at, 1);
  };
  flag('--http2-prior-knowledge');
  assert.deepEqual(flag('--protocol').concat(args.splice(args.indexOf('grpc'), 1)), ['--protocol', 'grpc']);
  const list = args.includes('--list-methods');
  if (list) flag('--list-methods');
  let data: unknown;
  const d = args.indexOf('-d');
  if (d >= 0) data = JSON.parse(args.splice(d, 2)[1]);
  assert.equal(args.length, 1, `${words.join(' ')}: one URL`);
  const url = new URL(args[0]);
  assert.equal(url.protocol, 'http:', 'cleartext HTTP/2 to the rate-limit port');
  return { address: url.host, what: list ? 'list' : url.pathname.slice(1), data };
}

/**
 * Runs one grpcurl or `buf curl` command against the gRPC address it names,
 * and resolves what it answered (the services, for a listing).
 */
export async function grpcurl(words: readonly string[]): Promise<unknown> {
  const { address, what, data } = words[0] === 'grpcurl' ? grpcurlCall(words) : bufCurlCall(words);
  const clients = grpcClients(address);
  try {
    if (what === 'list') return await listServices(clients.reflectionV1alpha);
    const [service, method] = what.split('/');
    const client = CLIENT_OF[service];
    assert.ok(client, `no client for ${service}`);
    const definition = protos().lookupService(service).methods[method];
    assert.ok(definition, `${service} has no method ${method}`);
    definition.resolve();
    assertFields(definition.resolvedRequestType!, data ?? {}, 'the request');
    return await unary(clients[client], method, data ?? {});
  } finally {
    clients.close();
  }
}
