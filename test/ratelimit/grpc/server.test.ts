import assert from 'node:assert/strict';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {
  createRateLimitGrpcServer,
  createRateLimitService,
  type RateLimitGrpcServer,
  type RateLimitResponse,
  type RateLimitService,
} from '../../../src/ratelimit';
import { mapEntryName, resolveReference } from '../../../src/ratelimit/grpc/reflection';
import { FileDescriptorProto, type IDescriptorProto, type IFileDescriptorProto } from 'protobufjs/ext/descriptor';
import { grpcClients, listServices, reflect, unary, type Clients } from '../../support/grpc-clients';
import { memoryLogger } from '../../support/memory-logger';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'envoy-config');
const request = (value: string) => ({ domain: 'messaging', descriptors: [{ entries: [{ key: 'client', value }] }] });
/** Marketing messages to a number: 5 a day, so that no window turns during a test. */
const marketing = (to: string) => ({
  domain: 'messaging',
  descriptors: [
    {
      entries: [
        { key: 'message_type', value: 'marketing' },
        { key: 'to_number', value: to },
      ],
    },
  ],
});

describe('rate-limit gRPC server', () => {
  let service: RateLimitService;
  let server: RateLimitGrpcServer;
  let clients: Clients;

  before(async () => {
    service = createRateLimitService({ limitsDir: FIXTURE, logger: memoryLogger() });
    server = createRateLimitGrpcServer(service, { port: 0 });
    const port = await server.start();
    clients = grpcClients(`127.0.0.1:${port}`);
  });
  after(async () => {
    clients.close();
    await server.stop();
    await service.close();
  });

  it('answers envoy.service.ratelimit.v3 with limit, remainder and time to reset', async () => {
    const res = await unary(clients.envoy, 'ShouldRateLimit', request('v3'));
    assert.equal(res.overall_code, 'OK');
    const [status] = res.statuses;
    assert.equal(status.code, 'OK');
    assert.deepEqual(status.current_limit, { name: '', requests_per_unit: 2, unit: 'SECOND' });
    assert.equal(status.limit_remaining, 1);
    // Whole seconds, as envoyproxy/ratelimit answers: a per-second limit always resets in 1 s.
    assert.deepEqual(status.duration_until_reset, { seconds: 1, nanos: 0 });
  });

  it('answers pb.lyft.ratelimit from the same counters', async () => {
    await unary(clients.envoy, 'ShouldRateLimit', marketing('shared'));
    const res = await unary(clients.lyft, 'ShouldRateLimit', marketing('shared'));
    assert.equal(res.overall_code, 'OK');
    assert.deepEqual(res.statuses[0], {
      code: 'OK',
      current_limit: { requests_per_unit: 5, unit: 'DAY' },
      limit_remaining: 3,
    });
  });

  it('answers OVER_LIMIT on both services past the limit', async () => {
    const codes = [];
    for (const client of [
      clients.lyft,
      clients.envoy,
      clients.lyft,
      clients.envoy,
      clients.lyft,
      clients.envoy,
      clients.lyft,
    ]) {
      codes.push((await unary(client, 'ShouldRateLimit', marketing('over'))).overall_code);
    }
    assert.deepEqual(codes, ['OK', 'OK', 'OK', 'OK', 'OK', 'OVER_LIMIT', 'OVER_LIMIT']);
    const over = await unary(clients.envoy, 'ShouldRateLimit', marketing('over'));
    assert.equal(over.statuses[0].code, 'OVER_LIMIT');
    assert.equal(over.statuses[0].limit_remaining, 0);
  });

  it('answers a request with only a domain OK', async () => {
    for (const client of [clients.lyft, clients.envoy]) {
      const res = await unary(client, 'ShouldRateLimit', { domain: 'anything' });
      assert.equal(res.overall_code, 'OK');
      assert.deepEqual(res.statuses, []);
    }
  });

  it('refuses an empty domain with INVALID_ARGUMENT', async () => {
    for (const client of [clients.lyft, clients.envoy]) {
      await assert.rejects(
        unary(client, 'ShouldRateLimit', { domain: '', descriptors: [] }),
        (err: grpc.ServiceError) => {
          assert.equal(err.code, grpc.status.INVALID_ARGUMENT);
          assert.match(err.details, /domain/);
          return true;
        },
      );
    }
  });

  it('honours a descriptor limit override and hits_addend sent by an Envoy', async () => {
    const res = await unary(clients.envoy, 'ShouldRateLimit', {
      domain: 'messaging',
      descriptors: [
        {
          entries: [{ key: 'x', value: `o-${Date.now()}` }],
          limit: { requests_per_unit: 10, unit: 'WEEK' },
          hits_addend: { value: 4 },
        },
      ],
    });
    assert.deepEqual(res.statuses[0].current_limit, { name: '', requests_per_unit: 10, unit: 'WEEK' });
    assert.equal(res.statuses[0].limit_remaining, 6);
  });

  const refused = (pattern: RegExp) => (err: grpc.ServiceError) => {
    assert.equal(err.code, grpc.status.INVALID_ARGUMENT);
    assert.match(err.details, pattern);
    return true;
  };

  it('refuses a descriptor limit of an unknown unit with INVALID_ARGUMENT instead of applying the configured limit', async () => {
    for (const unit of ['UNKNOWN', 99]) {
      const override = { entries: [{ key: 'client', value: 'u' }], limit: { requests_per_unit: 0, unit } };
      await assert.rejects(
        unary(clients.envoy, 'ShouldRateLimit', { domain: 'messaging', descriptors: [override] }),
        refused(new RegExp(`descriptors\\[0\\]\\.limit\\.unit: ${unit} is not a rate-limit unit`)),
      );
    }
  });

  it('refuses a descriptor hits_addend past 2^53 with INVALID_ARGUMENT, counting nothing', async () => {
    const value = `h-${Date.now()}`;
    const huge = { entries: [{ key: 'client', value }], hits_addend: { value: '18446744073709551615' } };
    await assert.rejects(
      unary(clients.envoy, 'ShouldRateLimit', {
        domain: 'messaging',
        descriptors: [{ entries: [{ key: 'client', value }] }, huge],
      }),
      refused(/descriptors\[1\]\.hits_addend: above 9007199254740991, the largest count it may add$/),
    );
    const after = await unary(clients.envoy, 'ShouldRateLimit', request(value));
    assert.equal(after.statuses[0].limit_remaining, 1);
  });

  it('refuses a request of more than 1000 descriptors with INVALID_ARGUMENT, counting none', async () => {
    const value = `many-${Date.now()}`;
    const descriptors = Array.from({ length: 1001 }, (_, i) => ({
      entries: [{ key: 'client', value: i === 0 ? value : `${value}-${i}` }],
    }));
    await assert.rejects(
      unary(clients.lyft, 'ShouldRateLimit', { domain: 'messaging', descriptors }),
      refused(/at most 1000 descriptors, this one 1001/),
    );
    assert.equal((await unary(clients.envoy, 'ShouldRateLimit', request(value))).statuses[0].limit_remaining, 1);
  });

  it('lists both rate-limit services, health and reflection over reflection v1alpha and v1', async () => {
    for (const client of [clients.reflectionV1alpha, clients.reflectionV1]) {
      const names = await listServices(client);
      for (const name of [
        'envoy.service.ratelimit.v3.RateLimitService',
        'pb.lyft.ratelimit.RateLimitService',
        'grpc.health.v1.Health',
        'grpc.reflection.v1alpha.ServerReflection',
      ]) {
        assert.ok(names.includes(name), `${name} missing from ${names.join(', ')}`);
      }
    }
  });

  it('describes both services with descriptors a reflection client can link, as grpcurl fetches them', async () => {
    const decode = (bins: Buffer[]) =>
      bins.map(
        (b) =>
          FileDescriptorProto.decode(b) as unknown as IFileDescriptorProto & { name: string; dependency: string[] },
      );
    for (const client of [clients.reflectionV1alpha, clients.reflectionV1]) {
      for (const symbol of [
        'envoy.service.ratelimit.v3.RateLimitService',
        'pb.lyft.ratelimit.RateLimitService',
        'grpc.health.v1.Health',
      ]) {
        const first = await reflect(client, { file_containing_symbol: symbol });
        const files = new Map(decode(first.file_descriptor_response.file_descriptor_proto).map((f) => [f.name, f]));
        // Fetch every dependency by name, as a client does, until the set is closed.
        for (let more = true; more;) {
          more = false;
          for (const f of [...files.values()]) {
            for (const dep of f.dependency) {
              if (files.has(dep)) continue;
              const res = await reflect(client, { file_by_filename: dep });
              assert.ok(res.file_descriptor_response, `${dep} not served`);
              for (const d of decode(res.file_descriptor_response.file_descriptor_proto)) files.set(d.name, d);
              more = true;
            }
          }
        }
        // Every type a file refers to is its own or one of its direct dependencies'.
        const defined = new Map<string, string>();
        const walk = (msgs: IDescriptorProto[] | undefined, scope: string, file: string) => {
          for (const m of msgs ?? []) {
            // Map entries carry protoc's names (`fields` → `FieldsEntry`), or strict clients refuse the file.
            for (const entry of (m.nestedType ?? []).filter((n) => n.options?.mapEntry)) {
              const field = m.field?.find((f) => f.typeName === entry.name);
              assert.equal(
                entry.name,
                field && mapEntryName(field.name!),
                `${scope}.${m.name}: map entry ${entry.name}`,
              );
            }
            defined.set(`${scope}.${m.name}`, file);
            walk(m.nestedType, `${scope}.${m.name}`, file);
            for (const e of m.enumType ?? []) defined.set(`${scope}.${m.name}.${e.name}`, file);
          }
        };
        for (const f of files.values()) {
          walk(f.messageType, `.${f.package}`, f.name);
          for (const e of f.enumType ?? []) defined.set(`.${f.package}.${e.name}`, f.name);
        }
        for (const f of files.values()) {
          const refs: [string, string][] = [];
          const collect = (msgs: IDescriptorProto[] | undefined, scope: string) => {
            for (const m of msgs ?? []) {
              for (const field of m.field ?? []) if (field.typeName) refs.push([field.typeName, `${scope}.${m.name}`]);
              collect(m.nestedType, `${scope}.${m.name}`);
            }
          };
          collect(f.messageType, `.${f.package}`);
          for (const s of f.service ?? [])
            for (const m of s.method ?? [])
              refs.push([m.inputType!, `.${f.package}.${s.name}`], [m.outputType!, `.${f.package}.${s.name}`]);
          for (const [name, scope] of refs) {
            const target = resolveReference(name, scope, defined);
            const owner = target && defined.get(target);
            assert.ok(owner, `${f.name}: ${name} is defined nowhere`);
            assert.ok(
              owner === f.name || f.dependency.includes(owner),
              `${f.name}: ${name} is in ${owner}, not a dependency`,
            );
          }
        }
      }
    }
  });

  it('names map entries as protoc does', () => {
    assert.equal(mapEntryName('fields'), 'FieldsEntry');
    assert.equal(mapEntryName('request_headers_2'), 'RequestHeaders2Entry');
  });

  it("answers health checks SERVING, for envoyproxy/ratelimit's name ratelimit too, and NOT_FOUND for an unknown service", async () => {
    assert.deepEqual(await unary(clients.health, 'Check', { service: '' }), { status: 'SERVING' });
    assert.deepEqual(await unary(clients.health, 'Check', { service: 'ratelimit' }), { status: 'SERVING' });
    assert.deepEqual(await unary(clients.health, 'Check', { service: 'envoy.service.ratelimit.v3.RateLimitService' }), {
      status: 'SERVING',
    });
    await assert.rejects(
      unary(clients.health, 'Check', { service: 'nope' }),
      (err: grpc.ServiceError) => err.code === grpc.status.NOT_FOUND,
    );
  });

  it("repeats at most 100 characters of an unknown service's name in its NOT_FOUND", async () => {
    await assert.rejects(unary(clients.health, 'Check', { service: 'x'.repeat(60_000) }), (err: grpc.ServiceError) => {
      assert.equal(err.code, grpc.status.NOT_FOUND);
      assert.equal(err.details, `unknown service '${'x'.repeat(100)}…'`);
      return true;
    });
  });

  it('keeps nothing of a health Watch once its stream is cancelled, whatever name it watched', async () => {
    const watches = Array.from({ length: 50 }, (_, i) => {
      const call = clients.health.Watch({ service: `made-up-${i}` });
      call.on('error', () => {});
      return new Promise<grpc.ClientReadableStream<unknown>>((resolve) =>
        call.once('data', (msg: { status: string }) => {
          assert.equal(msg.status, 'SERVICE_UNKNOWN');
          resolve(call);
        }),
      );
    });
    const calls = await Promise.all(watches);
    assert.equal(server.health.watchedServices, 50);
    for (const call of calls) call.cancel();
    // The cancellations reach the server when they do: the test's timeout ends a wait for one that never does.
    while (server.health.watchedServices > 0) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.health.watchedServices, 0);
  });

  it('reports UNAVAILABLE when the store fails', async () => {
    const broken = createRateLimitService({
      limitsDir: FIXTURE,
      logger: memoryLogger(),
      store: {
        kind: 'broken',
        decide: () => Promise.reject(new Error('redis at 10.1.2.3 is down')),
        close: async () => {},
      },
    });
    const other = createRateLimitGrpcServer(broken, { port: 0 });
    const c = grpcClients(`127.0.0.1:${await other.start()}`);
    try {
      await assert.rejects(unary(c.envoy, 'ShouldRateLimit', request('x')), (err: grpc.ServiceError) => {
        assert.equal(err.code, grpc.status.UNAVAILABLE);
        assert.doesNotMatch(err.details, /10\.1\.2\.3/);
        return true;
      });
    } finally {
      c.close();
      await other.stop();
    }
  });
});

describe('rate-limit gRPC server shutdown', () => {
  it('tells health watchers NOT_SERVING and stops even with a Watch open', async () => {
    const service = createRateLimitService({ limits: [], logger: memoryLogger() });
    const server = createRateLimitGrpcServer(service, { port: 0 });
    const clients = grpcClients(`127.0.0.1:${await server.start()}`);
    const seen: string[] = [];
    const call = clients.health.Watch({ service: '' });
    const ended = new Promise<void>((resolve) => {
      call.on('data', (msg: { status: string }) => {
        seen.push(msg.status);
        if (seen.length === 1) void server.stop();
      });
      call.on('end', resolve);
      call.on('error', () => resolve());
    });
    await ended;
    assert.deepEqual(seen, ['SERVING', 'NOT_SERVING']);
    clients.close();
  });

  it('drains: health says NOT_SERVING to Check and to a Watch that stays open, while calls are still answered', async () => {
    const service = createRateLimitService({ limits: [], logger: memoryLogger() });
    const server = createRateLimitGrpcServer(service, { port: 0 });
    const clients = grpcClients(`127.0.0.1:${await server.start()}`);
    try {
      const seen: string[] = [];
      const call = clients.health.Watch({ service: '' });
      let ended = false;
      call.on('end', () => (ended = true));
      call.on('error', () => (ended = true));
      const told = new Promise<void>((resolve) =>
        call.on('data', (msg: { status: string }) => {
          seen.push(msg.status);
          if (seen.length === 1) server.drain();
          else resolve();
        }),
      );
      await told;
      assert.deepEqual(seen, ['SERVING', 'NOT_SERVING']);
      assert.deepEqual(await unary(clients.health, 'Check', { service: '' }), { status: 'NOT_SERVING' });
      assert.equal((await unary(clients.envoy, 'ShouldRateLimit', { domain: 'd' })).overall_code, 'OK');
      assert.equal(ended, false, 'the Watch stays open until the stop');
    } finally {
      clients.close();
      await server.stop();
    }
  });

  it('answers a call in flight when stopped, and takes no new one', async () => {
    let release: (() => void) | undefined;
    let arrive: () => void;
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    // A limiter that holds the call until the test lets it answer.
    const held = {
      shouldRateLimit: () =>
        new Promise<RateLimitResponse>((answer) => {
          release = () => answer({ overallCode: 'OK', statuses: [] });
          arrive();
        }),
    };
    const server = createRateLimitGrpcServer(held, { port: 0 });
    const port = await server.start();
    const clients = grpcClients(`127.0.0.1:${port}`);
    try {
      const inFlight = unary(clients.envoy, 'ShouldRateLimit', { domain: 'd' });
      await arrived;
      const stopped = server.stop();
      const late = grpcClients(`127.0.0.1:${port}`);
      await assert.rejects(
        unary(late.envoy, 'ShouldRateLimit', { domain: 'd' }),
        (err: grpc.ServiceError) => err.code === grpc.status.UNAVAILABLE,
      );
      late.close();
      release!();
      assert.equal((await inFlight).overall_code, 'OK');
      await stopped;
    } finally {
      clients.close();
    }
  });

  it('serves the demo limits of config/ratelimit.yaml', async () => {
    const service = createRateLimitService({
      limitsDir: path.join(__dirname, '..', '..', '..', 'config'),
      logger: memoryLogger(),
    });
    const server = createRateLimitGrpcServer(service, { port: 0 });
    const clients = grpcClients(`127.0.0.1:${await server.start()}`);
    try {
      const ask = () =>
        unary(clients.envoy, 'ShouldRateLimit', {
          domain: 'gateway',
          descriptors: [{ entries: [{ key: 'x-gateway-test-allow', value: 'demo' }] }],
        });
      const codes = [];
      for (let i = 0; i < 4; i++) codes.push((await ask()).overall_code);
      assert.deepEqual(codes, ['OK', 'OK', 'OK', 'OVER_LIMIT']);
      const user = await unary(clients.envoy, 'ShouldRateLimit', {
        domain: 'gateway',
        descriptors: [{ entries: [{ key: 'user', value: 'alice' }] }],
      });
      assert.equal(user.statuses[0].current_limit.requests_per_unit, 60);
    } finally {
      clients.close();
      await server.stop();
    }
  });
});
