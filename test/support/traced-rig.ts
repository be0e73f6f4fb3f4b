/**
 * @module test/tracing/support/traced-rig
 * A traced Gatehouse in front of real services on real ports: a recording
 * upstream, the project's auth service behind a server that records the
 * headers it is sent, the project's rate-limit service behind a gRPC face
 * that records the metadata it is sent, and a stand-in OTLP collector.
 */
import * as grpc from '@grpc/grpc-js';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createAuthService, type AuthService } from '../../src/auth';
import type { GatehouseOptions } from '../../src/gatehouse';
import { createRateLimitService, type RateLimitService } from '../../src/ratelimit';
import { responseToProto, type ProtoRequest } from '../../src/ratelimit/grpc/messages/codec';
import { ENVOY_V3_SERVICE, rateLimitProtos } from '../../src/ratelimit/grpc/protos';
import { close } from './server';
import { freePort } from './ports';
import { recordingUpstream, type Received } from './upstreams';
import { copyConfig, DEMO_CONFIG, type TempConfig } from './config-folder';
import { startGatehouse, type Running } from './gatehouse';
import { startOtlpCollector, type OtlpCollector } from './otlp/collector';

const LIMITS = `domain: gateway
descriptors:
  - key: user
    rate_limit: {unit: minute, requests_per_unit: 1000}
`;

/** The records of the rig's folder: a remote AuthService and RateLimitService, a remote upstream, a module in process. */
function records(authPort: number, limitPort: number, upstreamUrl: string, deadPort: number, extra: string): string {
  return `apiVersion: gateway/v1
kind: AuthService
name: authentication
auth_service: 127.0.0.1:${authPort}
allowed_authorization_headers: [x-travel-user]
---
apiVersion: gateway/v1
kind: RateLimitService
name: limits
service: 127.0.0.1:${limitPort}
domain: gateway
timeout_ms: 5000
---
apiVersion: gateway/v1
kind: Mapping
name: upstream
prefix: /up/
service: ${upstreamUrl}
labels:
  gateway:
    - request_label_group:
        - user: {header: x-travel-user}
---
apiVersion: gateway/v1
kind: Mapping
name: retried
prefix: /retry/
service: ${upstreamUrl}
retry_policy: {retry_on: 5xx, num_retries: 1}
---
apiVersion: gateway/v1
kind: Mapping
name: dead
prefix: /dead/
service: 127.0.0.1:${deadPort}
---
apiVersion: gateway/v1
kind: Mapping
name: hotels
prefix: /v1/hotels
rewrite: ""
service: hotel-booking
${extra}`;
}

export interface TracedRig {
  readonly collector: OtlpCollector;
  readonly upstream: { received: Received[]; url: string };
  /** The headers of each check the auth service was asked. */
  readonly authHeaders: IncomingHttpHeaders[];
  /** The metadata of each call the rate-limit service took. */
  readonly limitMetadata: Record<string, string>[];
  readonly running: Running;
  readonly config: TempConfig;
  stop(): Promise<void>;
}

/** Starts the services, then a Gatehouse over them, exporting to the collector with `options`. */
export async function startTracedRig(options: GatehouseOptions = {}, extraRecords = ''): Promise<TracedRig> {
  const collector = await startOtlpCollector();
  // The first try of each request for /once (routed by /retry/) fails with a 503, the second is answered.
  let tries = 0;
  const upstream = await recordingUpstream((req, res) => {
    if (req.url!.startsWith('/once') && tries++ % 2 === 0) res.writeHead(503).end('not now');
    else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  const quiet = { info() {}, warn() {}, error() {} };
  const auth: AuthService = createAuthService({
    usersFile: join(DEMO_CONFIG, 'users.htpasswd'),
    threads: 0,
    logger: quiet,
  });
  const authHeaders: IncomingHttpHeaders[] = [];
  const authCallback = auth.app.callback();
  const authServer: Server = createServer((req, res) => {
    authHeaders.push({ ...req.headers });
    void authCallback(req, res);
  });
  await new Promise<void>((resolve) => authServer.listen(0, '127.0.0.1', resolve));

  const config = copyConfig();
  config.write('ratelimit.yaml', LIMITS);
  const limits: RateLimitService = createRateLimitService({
    limitsDir: config.dir,
    logger: quiet,
  });
  const limitMetadata: Record<string, string>[] = [];
  const grpcServer = new grpc.Server();
  const definition = rateLimitProtos()[ENVOY_V3_SERVICE] as grpc.ServiceDefinition;
  grpcServer.addService(definition, {
    ShouldRateLimit(call: grpc.ServerUnaryCall<ProtoRequest, unknown>, callback: grpc.sendUnaryData<unknown>) {
      const metadata: Record<string, string> = {};
      for (const [name, value] of Object.entries(call.metadata.getMap())) metadata[name] = String(value);
      limitMetadata.push(metadata);
      const request = call.request;
      void Promise.resolve(
        limits.shouldRateLimit({
          domain: request.domain,
          descriptors: request.descriptors.map((d) => ({ entries: d.entries.map((e) => ({ ...e })) })),
        }),
      ).then((response) => callback(null, responseToProto(response)));
    },
  });
  const limitPort = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
      err ? reject(err) : resolve(port),
    ),
  );
  // The demo's records give way to the rig's own.
  config.unlink('services.yaml');
  config.write(
    'services.yaml',
    records((authServer.address() as AddressInfo).port, limitPort, upstream.url, await freePort(), extraRecords),
  );
  const running = await startGatehouse({
    configDir: config.dir,
    otlpEndpoint: collector.httpUrl,
    bspScheduleDelayMs: 20,
    ...options,
  });
  return {
    collector,
    upstream,
    authHeaders,
    limitMetadata,
    running,
    config,
    async stop() {
      await running.stop();
      await close(upstream.server);
      await close(authServer);
      await new Promise<void>((resolve) => grpcServer.tryShutdown(() => resolve()));
      await auth.close();
      await limits.close();
      await collector.close();
      config.remove();
    },
  };
}
