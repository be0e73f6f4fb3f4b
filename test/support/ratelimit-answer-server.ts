/**
 * @module test/support/ratelimit-answer-server
 * A real gRPC server of Envoy's rate-limit API (v3), built from Envoy's own
 * protos as @grpc/grpc-js-xds ships them, that answers as each test says:
 * for the parts of an answer the built-in service never sends (`raw_body`,
 * `request_headers_to_add`), which a gateway must still honour.
 */
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const DEPS = path.join(path.dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');

export interface RateLimitAnswerServer {
  readonly port: number;
  readonly address: string;
  /** The domains and descriptors asked about. */
  readonly received: { domain: string; descriptors: { entries: { key: string; value: string }[] }[] }[];
  answer: () => Record<string, unknown>;
  close(): Promise<void>;
}

let definition: protoLoader.PackageDefinition | undefined;

function rateLimitService(): grpc.ServiceDefinition {
  definition ??= protoLoader.loadSync('envoy/service/ratelimit/v3/rls.proto', {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
    includeDirs: ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => path.join(DEPS, d)),
  });
  return definition['envoy.service.ratelimit.v3.RateLimitService'] as grpc.ServiceDefinition;
}

/** Starts a server on a free loopback port, over TLS with `tls`; it answers OK until told otherwise. */
export async function startRateLimitAnswerServer(tls?: { key: Buffer; cert: Buffer }): Promise<RateLimitAnswerServer> {
  const server = new grpc.Server();
  const self: RateLimitAnswerServer = {
    port: 0,
    address: '',
    received: [],
    answer: () => ({ overall_code: 'OK' }),
    async close() {
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
  };
  server.addService(rateLimitService(), {
    ShouldRateLimit(
      call: grpc.ServerUnaryCall<RateLimitAnswerServer['received'][number], unknown>,
      callback: grpc.sendUnaryData<unknown>,
    ) {
      self.received.push(call.request);
      callback(null, self.answer());
    },
  });
  const credentials = tls
    ? grpc.ServerCredentials.createSsl(null, [{ private_key: tls.key, cert_chain: tls.cert }])
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', credentials, (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  return Object.assign(self, { port, address: `127.0.0.1:${port}` });
}
