/**
 * @module test/support/ext-authz-server
 * A real gRPC server of Envoy's external authorization API, built from
 * Envoy's own protos as @grpc/grpc-js-xds ships them (not the trimmed copies
 * the gateway loads), so that what it reads and answers is what an
 * ext_authz service written against Envoy's API would. Each test says how it
 * answers; every check it received is recorded.
 */
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const DEPS = path.join(path.dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');

/** A check request as the server decoded it (proto field names, enums as names, int64 as strings). */
export type ReceivedCheck = {
  attributes: {
    source: { address: { socket_address: { address: string; port_value: number } } };
    destination: { address: { socket_address: { address: string; port_value: number } } };
    request: {
      time: { seconds: string; nanos: number } | null;
      http: {
        id: string;
        method: string;
        headers: Record<string, string>;
        path: string;
        host: string;
        scheme: string;
        query: string;
        size: string;
        protocol: string;
        body: string;
        raw_body: Buffer;
      };
    };
    context_extensions: Record<string, string>;
  };
};

/** How the server answers one check: a CheckResponse as plain fields, or a gRPC error, or never. */
export type CheckAnswer = Record<string, unknown> | { error: grpc.status } | 'never';

export interface ExtAuthzServer {
  readonly port: number;
  readonly address: string;
  readonly received: ReceivedCheck[];
  /** The gRPC metadata of each check, in the order of `received`. */
  readonly metadata: Record<string, string>[];
  answer: (check: ReceivedCheck) => CheckAnswer;
  close(): Promise<void>;
}

/** An OK answer that names alice in X-Travel-User. */
export const allowAlice = (): CheckAnswer => ({
  status: { code: 0 },
  ok_response: { headers: [{ header: { key: 'x-travel-user', value: 'alice' } }] },
});

let definition: protoLoader.PackageDefinition | undefined;

function authorization(): grpc.ServiceDefinition {
  definition ??= protoLoader.loadSync('envoy/service/auth/v3/external_auth.proto', {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
    includeDirs: ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => path.join(DEPS, d)),
  });
  return definition['envoy.service.auth.v3.Authorization'] as grpc.ServiceDefinition;
}

/** Starts a server on a free loopback port; with `tls`, it serves TLS with that key and certificate. */
export async function startExtAuthzServer(tls?: { key: Buffer; cert: Buffer }): Promise<ExtAuthzServer> {
  const server = new grpc.Server();
  const received: ReceivedCheck[] = [];
  const metadata: Record<string, string>[] = [];
  const held: (() => void)[] = [];
  const self: ExtAuthzServer = {
    port: 0,
    address: '',
    received,
    metadata,
    answer: allowAlice,
    async close() {
      for (const release of held) release();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      server.forceShutdown();
    },
  };
  server.addService(authorization(), {
    Check(call: grpc.ServerUnaryCall<ReceivedCheck, unknown>, callback: grpc.sendUnaryData<unknown>) {
      received.push(call.request);
      const sent: Record<string, string> = {};
      for (const [name, value] of Object.entries(call.metadata.getMap())) sent[name] = String(value);
      metadata.push(sent);
      const answer = self.answer(call.request);
      if (answer === 'never') held.push(() => callback({ code: grpc.status.UNAVAILABLE }));
      else if ('error' in answer) callback({ code: answer.error as grpc.status, details: 'refused by the test' });
      else callback(null, answer);
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
