/**
 * @module ratelimit/grpc/reflection-on-demand
 * Server reflection registered at once and built at its first call. Building
 * it parses every proto again and decodes, links and encodes their
 * descriptors (./reflection), the largest part of making a rate-limit
 * server, for a service that only tools such as grpcurl ever call: a
 * gateway that starts does not pay for it before it answers.
 */
import type * as grpc from '@grpc/grpc-js';

type Reflection = typeof import('./reflection');

/** The reflection methods served, v1alpha and v1 (both bidirectional streams). */
export const REFLECTION_METHODS: readonly string[] = [
  '/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo',
  '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo',
];

/** One reflection method as ./reflection builds it: its definition and its handler. */
interface Built {
  readonly method: grpc.MethodDefinition<unknown, unknown>;
  readonly handler: grpc.handleBidiStreamingCall<unknown, unknown>;
}

/** Builds reflection into a map of its methods by path, as `server.addService` would be given them. */
function buildReflection(): Map<string, Built> {
  const methods = new Map<string, Built>();
  (require('./reflection') as Reflection).addReflection({
    addService(service, implementation) {
      for (const [name, method] of Object.entries(service)) {
        const handler = (implementation[name] ?? implementation[method.originalName ?? name]) as Built['handler'];
        methods.set(method.path, { method, handler: handler.bind(implementation) });
      }
    },
  });
  return methods;
}

/**
 * Registers the reflection methods on `server`: each call, and each message
 * read or written, goes to reflection as ./reflection builds it, built when
 * the first call comes.
 */
export function addReflectionOnDemand(server: Pick<grpc.Server, 'register'>): void {
  let built: Map<string, Built> | undefined;
  for (const path of REFLECTION_METHODS) {
    const one = () => {
      built ??= buildReflection();
      const method = built.get(path);
      if (method === undefined) throw new Error(`reflection has no method ${path}`);
      return method;
    };
    server.register<unknown, unknown>(
      path,
      (call: grpc.ServerDuplexStream<unknown, unknown>) => one().handler(call),
      (value) => one().method.responseSerialize(value),
      (bytes) => one().method.requestDeserialize(bytes),
      'bidi',
    );
  }
}
