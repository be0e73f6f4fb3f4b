import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import {
  createRateLimitGrpcServer,
  createRateLimitService,
  ENVOY_V3_SERVICE,
  LYFT_SERVICE,
  type RateLimitGrpcServer,
  type RateLimitService,
} from '../../../src/ratelimit';
import { methodOf } from '../../../src/ratelimit/grpc/protos';
import { grpcClients, unary, type Clients } from '../../support/grpc-clients';
import { memoryLogger } from '../../support/memory-logger';

const LIMITS = [{ domain: 'd', descriptors: [{ key: 'k', rate_limit: { unit: 'day', requests_per_unit: 5 } }] }];

/** One descriptor of `entries` entries, the first `k=<value>` so that the limit above counts it. */
function wide(value: string, entries: number) {
  return {
    domain: 'd',
    descriptors: [
      {
        entries: Array.from({ length: entries }, (_, i) => ({
          key: i === 0 ? 'k' : 'e',
          value: i === 0 ? value : i.toString(36),
        })),
      },
    ],
  };
}

/** The wire bytes of a request, as a client sends them. */
function encode(request: object): Buffer {
  return methodOf(ENVOY_V3_SERVICE, 'ShouldRateLimit').requestSerialize(request);
}

/** Sends bytes already encoded as `service`'s ShouldRateLimit, as a client that does not check what it sends. */
function callRaw(client: grpc.Client, service: string, bytes: Buffer): Promise<unknown> {
  const method = methodOf(service, 'ShouldRateLimit');
  return new Promise((resolve, reject) => {
    // A deadline longer than the test: the refusal's code, not DEADLINE_EXCEEDED, is what ends the call.
    client.makeUnaryRequest(
      method.path,
      (b: Buffer) => b,
      method.responseDeserialize,
      bytes,
      { deadline: Date.now() + 600_000 },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
  });
}

let huge: Buffer | undefined;
/** The finding's request: 300,000 entries in one descriptor, 3.9 MB, encoded once (that alone takes the client a second). */
function hugeRequest(): Buffer {
  return (huge ??= encode(wide('huge', 300_000)));
}

const refusedWith = (code: grpc.status, pattern: RegExp) => (err: grpc.ServiceError) => {
  assert.equal(grpc.status[err.code], grpc.status[code]);
  assert.match(err.details, pattern);
  return true;
};

describe('what one rate-limit call may carry', () => {
  let service: RateLimitService;
  let server: RateLimitGrpcServer;
  let clients: Clients;

  async function serve(options: { maxMessageBytes?: number; maxDescriptorEntries?: number } = {}): Promise<void> {
    service = createRateLimitService({
      limits: LIMITS,
      logger: memoryLogger(),
      maxDescriptorEntries: options.maxDescriptorEntries,
    });
    server = createRateLimitGrpcServer(service, { port: 0, maxMessageBytes: options.maxMessageBytes });
    clients = grpcClients(`127.0.0.1:${await server.start()}`);
  }
  afterEach(async () => {
    clients.close();
    await server.stop();
    await service.close();
  });

  it('refuses a message past 64 KiB with RESOURCE_EXHAUSTED from its length, before reading it (300,000 entries, 3.9 MB)', async () => {
    await serve();
    for (const service of [ENVOY_V3_SERVICE, LYFT_SERVICE]) {
      await assert.rejects(
        callRaw(clients.envoy, service, hugeRequest()),
        refusedWith(grpc.status.RESOURCE_EXHAUSTED, /larger than max \(3\d{6} vs 65536\)/),
      );
    }
    assert.equal(service.stats().requests, 0, 'counted nowhere');
    // The connection and the service are as good as before.
    assert.equal((await unary(clients.envoy, 'ShouldRateLimit', wide('huge', 1))).statuses[0].limit_remaining, 4);
  });

  it('refuses a descriptor of more than 64 entries with INVALID_ARGUMENT naming it, counting nothing, on both services', async () => {
    await serve();
    const value = `wide-${Date.now()}`;
    for (const client of [clients.envoy, clients.lyft]) {
      await assert.rejects(
        unary(client, 'ShouldRateLimit', {
          domain: 'd',
          descriptors: [{ entries: [{ key: 'k', value }] }, wide(value, 65).descriptors[0]],
        }),
        refusedWith(
          grpc.status.INVALID_ARGUMENT,
          /^descriptors\[1\]: a descriptor carries at most 64 entries, this one 65$/,
        ),
      );
    }
    assert.equal(service.stats().requests, 0);
    const sixtyFour = await unary(clients.envoy, 'ShouldRateLimit', wide(value, 64));
    assert.equal(sixtyFour.overall_code, 'OK');
  });

  it('takes the bounds it is given: a larger message and more entries, or fewer', async () => {
    await serve({ maxMessageBytes: 8 * 1024 * 1024, maxDescriptorEntries: 2 });
    // Within 8 MiB, 300,000 entries are counted on the wire and refused unread.
    await assert.rejects(
      callRaw(clients.envoy, ENVOY_V3_SERVICE, hugeRequest()),
      refusedWith(
        grpc.status.INVALID_ARGUMENT,
        /^descriptors\[0\]: a descriptor carries at most 2 entries, this one 300000$/,
      ),
    );
    assert.equal((await unary(clients.envoy, 'ShouldRateLimit', wide('x', 2))).overall_code, 'OK');
  });

  it('takes at most maxConcurrentStreams calls at once on one connection, and another once one ends', async () => {
    service = createRateLimitService({ limits: LIMITS, logger: memoryLogger() });
    server = createRateLimitGrpcServer(service, { port: 0, maxConcurrentStreams: 10 });
    clients = grpcClients(`127.0.0.1:${await server.start()}`);
    // Connected first: the client knows the server's limit before it opens the streams.
    await unary(clients.health, 'Check', { service: '' });
    const got = new Array<number>(11).fill(0);
    const refused = new Array<string | undefined>(11).fill(undefined);
    const watch = (service: string, onData: () => void, onError: (err: grpc.ServiceError) => void) => {
      const call = clients.health.Watch({ service });
      call.on('data', onData);
      call.on('error', onError);
      return call;
    };
    const calls = got.map((_, i) =>
      watch(
        `watch-${i}`,
        () => got[i]++,
        (err) => {
          if (err.code !== grpc.status.CANCELLED) refused[i] = `${err.code}: ${err.details}`;
        },
      ),
    );
    const firstTen = () => got.slice(0, 10).every((n) => n > 0);
    while (!firstTen()) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(server.health.watchedServices, 10);
    assert.equal(got[10], 0, 'the eleventh waits');
    calls[0].cancel();
    while (got[10] === 0 && refused[10] === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
    if (refused[10] !== undefined) {
      // Node 22 and later: the HTTP/2 server refuses the stream the client sends
      // the instant another ends, which it still counts; a call made then is served.
      assert.match(refused[10], new RegExp(`^${grpc.status.RESOURCE_EXHAUSTED}: `));
      let late = 0;
      const again = watch(
        'watch-again',
        () => late++,
        () => undefined,
      );
      while (late === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      again.cancel();
    }
    for (const call of calls) call.cancel();
  });

  it('serves reflection and health under the message limit', async () => {
    await serve({ maxMessageBytes: 1024 });
    assert.deepEqual(await unary(clients.health, 'Check', { service: '' }), { status: 'SERVING' });
    await assert.rejects(
      unary(clients.health, 'Check', { service: 'x'.repeat(2000) }),
      refusedWith(grpc.status.RESOURCE_EXHAUSTED, /larger than max/),
    );
  });

  it('refuses the same request in process, where no wire bytes were counted', async () => {
    await serve();
    await assert.rejects(
      service.shouldRateLimit({ domain: 'd', descriptors: [{ entries: wide('x', 65).descriptors[0].entries }] }),
      {
        code: 'INVALID_ARGUMENT',
        message: 'descriptors[0]: a descriptor carries at most 64 entries, this one 65',
      },
    );
  });
});

describe('rate-limit request bounds', () => {
  it('refuses bounds that are not whole numbers of at least 1', () => {
    assert.throws(
      () => createRateLimitService({ limits: [], maxDescriptorEntries: 0 }),
      /^RangeError: maxDescriptorEntries must be a whole number of 1 or more, got 0$/,
    );
    assert.throws(
      () => createRateLimitGrpcServer(createRateLimitService({ limits: [] }), { maxMessageBytes: 1.5 }),
      /maxMessageBytes must be a whole number of 1 or more, got 1\.5/,
    );
  });
});
