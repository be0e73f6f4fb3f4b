/**
 * A Mapping's `retry_policy` for gRPC calls: a call whose connection cannot
 * be made is tried on the next endpoint, as nothing of it went out; without
 * a policy, it is answered UNAVAILABLE.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { listen, type RunningServer } from '../../../../src/gatehouse';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { startEchoServer, type EchoServer } from '../../../support/grpc-echo';
import { freePort } from '../../../support/ports';
import { configOf, mapping } from '../../../support/records';

describe('retries of gRPC calls', () => {
  let upstream: EchoServer;
  let gateway: Gateway;
  let server: RunningServer;
  let client: grpc.Client;

  /** A unary call to `method`: the status it ends with. */
  function call(method: string): Promise<grpc.StatusObject> {
    return new Promise((resolve) => {
      const same = (v: Buffer) => v;
      const c = client.makeUnaryRequest(method, same, same, Buffer.from('{"text":"again"}'), () => undefined);
      c.on('status', resolve);
    });
  }

  before(async () => {
    upstream = await startEchoServer();
    const dead = await freePort();
    const endpoints = [`127.0.0.1:${dead}`, upstream.address];
    gateway = createGateway({
      config: configOf(
        mapping('/retried.Echo/', upstream.address, {
          grpc: true,
          rewrite: '/test.Echo/',
          endpoints,
          retry_policy: { retry_on: 'connect-failure', num_retries: 2 },
        }),
        mapping('/once.Echo/', upstream.address, { grpc: true, rewrite: '/test.Echo/', endpoints }),
      ),
    });
    server = await listen(gateway.app.callback(), { host: '127.0.0.1', port: 0 });
    client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    client?.close();
    await server?.close(0);
    await gateway?.close();
    await upstream?.close();
  });

  it('tries a call whose connection failed on the next endpoint', async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call('/retried.Echo/Unary')).code);
    assert.deepEqual(statuses, [grpc.status.OK, grpc.status.OK, grpc.status.OK, grpc.status.OK]);
    assert.equal(upstream.received.length, 4);
  });

  it('answers UNAVAILABLE without a retry policy when the endpoint picked cannot be reached', async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call('/once.Echo/Unary')).code);
    assert.ok(statuses.includes(grpc.status.UNAVAILABLE), String(statuses));
  });
});
