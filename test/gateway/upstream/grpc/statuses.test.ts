/**
 * The gateway's own answers to a grpc-js client, as the gRPC statuses Envoy
 * gives them, trailers-only: no route, an upstream that cannot be reached,
 * a deadline that passes (the client's, the Mapping's), no credentials, a
 * denial, a limit; and auth and limits applied to calls as to any request,
 * their labels read from the call's metadata.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen, type RunningServer } from '../../../../src/gatehouse';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { createAuthStage } from '../../../../src/gateway/stages/auth-stage';
import { createRateLimitStage } from '../../../../src/gateway/stages/ratelimit-stage';
import { echoClient, startEchoServer, unary, type EchoClient, type EchoServer } from '../../../support/grpc-echo';
import { startBasicAuthStandIn } from '../../../support/basic-auth-stand-in';
import { memoryLogger } from '../../../support/memory-logger';
import { startRateLimitAnswerServer, type RateLimitAnswerServer } from '../../../support/ratelimit-answer-server';
import { configOf, mapping } from '../../../support/records';
import { close } from '../../../support/server';

const LABELS = { shop: [{ request_label_group: [{ tenant: { header: 'x-tenant', omit_if_not_present: true } }] }] };

function withAuth(value: string, tenant?: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', value);
  if (tenant !== undefined) metadata.set('x-tenant', tenant);
  return metadata;
}

describe("the gateway's own answers to gRPC calls", () => {
  let upstream: EchoServer;
  let auth: Server;
  let rls: RateLimitAnswerServer;
  let servers: { gateway: Gateway; server: RunningServer; client: EchoClient }[];

  async function start(records: unknown[], useResourceExhausted = false): Promise<EchoClient> {
    const gateway = createGateway({
      config: configOf(
        ...records,
        {
          apiVersion: 'gateway/v1',
          kind: 'AuthService',
          name: 'auth',
          auth_service: `127.0.0.1:${(auth.address() as AddressInfo).port}`,
          allowed_authorization_headers: ['x-travel-user'],
          timeout_ms: 5000,
        },
        {
          apiVersion: 'gateway/v1',
          kind: 'RateLimitService',
          name: 'limits',
          service: rls.address,
          domain: 'shop',
          timeout_ms: 5000,
          ...(useResourceExhausted ? { grpc: { use_resource_exhausted_code: true } } : {}),
        },
      ),
      stages: {
        auth: (record, modules) => createAuthStage(record, modules, { logger: memoryLogger() }),
        rateLimit: (record, modules, settings) =>
          createRateLimitStage(record, modules, { ...settings, logger: memoryLogger() }),
      },
    });
    const server = await listen(gateway.app.callback(), { host: '127.0.0.1', port: 0 });
    const client = echoClient(`127.0.0.1:${server.port}`);
    servers.push({ gateway, server, client });
    return client;
  }

  /** A unary call to any method of the first gateway, its message as JSON: the status it ends with. */
  function rawCall(method: string, message: object, metadata = new grpc.Metadata()): Promise<grpc.StatusObject> {
    const c = new grpc.Client(`127.0.0.1:${servers[0].server.port}`, grpc.credentials.createInsecure());
    return new Promise<grpc.StatusObject>((resolve) => {
      const json = (v: Buffer) => v;
      const call = c.makeUnaryRequest(method, json, json, Buffer.from(JSON.stringify(message)), metadata, () =>
        c.close(),
      );
      call.on('status', resolve);
    });
  }

  let client: EchoClient;
  before(async () => {
    servers = [];
    upstream = await startEchoServer();
    auth = await startBasicAuthStandIn();
    rls = await startRateLimitAnswerServer();
    client = await start([
      mapping('/test.Echo/', upstream.address, { grpc: true, rewrite: '', labels: LABELS }),
      mapping('/gone.Echo/', '127.0.0.1:1', { grpc: true, rewrite: '/test.Echo/', bypass_auth: true }),
      mapping('/slow.Echo/', upstream.address, {
        grpc: true,
        rewrite: '/test.Echo/',
        timeout_ms: 200,
        bypass_auth: true,
      }),
    ]);
  });
  beforeEach(() => {
    rls.answer = () => ({ overall_code: 'OK' });
    rls.received.length = 0;
    upstream.received.length = 0;
  });
  after(async () => {
    for (const { gateway, server, client } of servers) {
      client.close();
      await server.close(0);
      await gateway.close();
    }
    await upstream?.close();
    await close(auth);
    await rls?.close();
  });

  it('authenticates a call and names its user to the upstream in x-travel-user, whatever the client claimed', async () => {
    const metadata = withAuth('Basic good', 'acme');
    metadata.set('x-travel-user', 'mallory');
    const outcome = await unary(client, { text: 'hi' }, metadata);
    assert.equal(outcome.status.code, grpc.status.OK, outcome.status.details);
    assert.equal(outcome.answer?.user, 'alice');
    // The label was read from the call's metadata.
    assert.deepEqual(rls.received[0].descriptors[0].entries, [{ key: 'tenant', value: 'acme' }]);
  });

  it('answers a call without credentials UNAUTHENTICATED, and sends nothing upstream', async () => {
    const outcome = await unary(client, { text: 'hi' });
    assert.equal(outcome.status.code, grpc.status.UNAUTHENTICATED);
    assert.match(outcome.status.details, /401/);
    assert.deepEqual(outcome.status.metadata.get('www-authenticate'), ['Basic realm="travel"']);
    assert.equal(upstream.received.length, 0);
  });

  it('answers a call the auth service denies PERMISSION_DENIED', async () => {
    const outcome = await unary(client, { text: 'hi' }, withAuth('Basic banned'));
    assert.equal(outcome.status.code, grpc.status.PERMISSION_DENIED);
    assert.equal(outcome.status.details, 'banned');
    assert.equal(upstream.received.length, 0);
  });

  it('answers a call over a limit UNAVAILABLE, with the rate-limit headers', async () => {
    rls.answer = () => ({ overall_code: 'OVER_LIMIT' });
    const outcome = await unary(client, { text: 'hi' }, withAuth('Basic good', 'acme'));
    assert.equal(outcome.status.code, grpc.status.UNAVAILABLE);
    assert.deepEqual(outcome.status.metadata.get('x-envoy-ratelimited'), ['true']);
    assert.equal(upstream.received.length, 0);
  });

  it("answers a call over a limit RESOURCE_EXHAUSTED when the RateLimitService asks for it, the service's raw_body as its message", async () => {
    const exhausted = await start(
      [mapping('/test.Echo/', upstream.address, { grpc: true, rewrite: '', labels: LABELS })],
      true,
    );
    rls.answer = () => ({ overall_code: 'OVER_LIMIT' });
    const outcome = await unary(exhausted, { text: 'hi' }, withAuth('Basic good', 'acme'));
    assert.equal(outcome.status.code, grpc.status.RESOURCE_EXHAUSTED);
    rls.answer = () => ({ overall_code: 'OVER_LIMIT', raw_body: Buffer.from('slow down, please') });
    const written = await unary(exhausted, { text: 'hi' }, withAuth('Basic good', 'acme'));
    assert.deepEqual(
      [written.status.code, written.status.details, upstream.received.length],
      [grpc.status.RESOURCE_EXHAUSTED, 'slow down, please', 0],
    );
  });

  it('answers a call no Mapping routes UNIMPLEMENTED', async () => {
    const status = await rawCall('/nowhere.Service/Call', {});
    assert.equal(status.code, grpc.status.UNIMPLEMENTED, status.details);
    assert.match(status.details, /404/);
  });

  it('answers a call whose upstream cannot be reached UNAVAILABLE', async () => {
    const status = await rawCall('/gone.Echo/Unary', {});
    assert.equal(status.code, grpc.status.UNAVAILABLE);
    assert.match(status.details, /unavailable/);
  });

  it("answers DEADLINE_EXCEEDED when the Mapping's timeout_ms passes, and cancels the upstream's call", async () => {
    const cancelled = upstream.cancelled();
    const status = await rawCall('/slow.Echo/Unary', { delayMs: 60_000 });
    assert.equal(status.code, grpc.status.DEADLINE_EXCEEDED);
    assert.match(status.details, /200 ms/);
    assert.equal((await cancelled).method, 'unary');
  });
});
