import assert from 'node:assert/strict';
import { once } from 'node:events';
import * as http2 from 'node:http2';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { createGatehouse, resolveOptions } from '../../src/gatehouse';
import { grpcClients, unary } from '../support/grpc-clients';
import { DEMO_CONFIG } from '../support/config-folder';

describe('gatehouse options from code', () => {
  const refused: [string, Record<string, unknown>, string][] = [
    [
      'a negative body limit',
      { bodyLimit: -5 },
      'bodyLimit: must be a number of bytes of 0 or more (512k, 16m, 1g) (got -5)',
    ],
    [
      'a fractional body limit',
      { bodyLimit: 1.5 },
      'bodyLimit: must be a number of bytes of 0 or more (512k, 16m, 1g) (got 1.5)',
    ],
    ['a port over 65535', { port: 70000 }, 'port: must be an integer from 0 to 65535 (got 70000)'],
    [
      'a gRPC port that is NaN',
      { grpcPort: NaN },
      'grpcPort: must be an integer from 0 to 65535, or false for none (got NaN)',
    ],
    [
      'a gRPC port of true',
      { grpcPort: true },
      'grpcPort: must be an integer from 0 to 65535, or false for none (got true)',
    ],
    [
      'a negative shutdown grace',
      { shutdownGraceMs: -1 },
      'shutdownGraceMs: must be an integer of 0 or more (milliseconds) (got -1)',
    ],
    [
      'an infinite reload debounce',
      { reloadDebounceMs: Infinity },
      'reloadDebounceMs: must be an integer of 0 or more (milliseconds) (got Infinity)',
    ],
    [
      'a fractional keep-alive timeout',
      { keepAliveTimeoutMs: 0.5 },
      'keepAliveTimeoutMs: must be an integer of 0 or more (milliseconds) (got 0.5)',
    ],
    [
      'a database timeout of 0',
      { databaseTimeoutMs: 0 },
      'databaseTimeoutMs: must be an integer of 1 or more (milliseconds) (got 0)',
    ],
    [
      'a booking store it does not know',
      { bookingStore: 'redis' },
      'bookingStore: must be one of database, memory (got "redis")',
    ],
    [
      'a file size limit of 0',
      { fileSizeLimit: 0 },
      'fileSizeLimit: must be a number of bytes of 1 or more (512k, 16m, 1g) (got 0)',
    ],
    [
      'a negative retry buffer',
      { retryBufferBytes: -1 },
      'retryBufferBytes: must be a number of bytes of 0 or more (512k, 16m, 1g) (got -1)',
    ],
    [
      'a cluster domain that is no domain',
      { clusterDomain: 'cluster local' },
      'clusterDomain: must be a DNS domain such as cluster.local (got "cluster local")',
    ],
    [
      'a negative drain delay',
      { drainDelayMs: -1 },
      'drainDelayMs: must be an integer of 0 or more (milliseconds) (got -1)',
    ],
    [
      'a gRPC message limit of 0',
      { grpcMaxMessageBytes: 0 },
      'grpcMaxMessageBytes: must be an integer of 1 or more (bytes) (got 0)',
    ],
    [
      'a gRPC connection cap of 0',
      { grpcMaxConnections: 0 },
      'grpcMaxConnections: must be an integer of 1 or more (got 0)',
    ],
    [
      'a fractional gRPC request timeout',
      { grpcRequestTimeoutMs: 2.5 },
      'grpcRequestTimeoutMs: must be an integer of 1 or more (milliseconds) (got 2.5)',
    ],
    [
      'a fractional entry bound',
      { maxDescriptorEntries: 1.5 },
      'maxDescriptorEntries: must be an integer of 1 or more (got 1.5)',
    ],
    [
      'an annotation domain that is no domain',
      { annotationDomain: 'bad domain' },
      'annotationDomain: must be a DNS domain such as gatehouse.io (got "bad domain")',
    ],
    [
      'a log level it does not know',
      { logLevel: 'loud' },
      'logLevel: must be one of trace, debug, info, warn, error, fatal, silent (got "loud")',
    ],
    [
      'a database URL of another scheme, without quoting its password',
      { databaseUrl: 'mysql://u:hunter2@db/d' },
      'databaseUrl: must be a postgres:// or postgresql:// URL (postgres://user:password@host:5432/database) (got the scheme mysql://)',
    ],
  ];
  for (const [what, option, message] of refused) {
    it(`refuses ${what}, naming the option`, async () => {
      await assert.rejects(
        createGatehouse({ configDir: DEMO_CONFIG, grpcPort: false, watch: false, ...option }),
        (err: Error) => {
          assert.equal(err.name, 'RangeError');
          assert.equal(err.message, message);
          return true;
        },
      );
    });
  }

  const mistyped: [string, unknown, string | RegExp][] = [
    [
      'an option of no such name (a misspelt port)',
      { prot: 18565 },
      /^there is no option 'prot'; the options are configDir, host, port, /,
    ],
    ['a port given as a string', { port: '18565' }, 'port: must be an integer from 0 to 65535 (got "18565")'],
    ['watch given as a string', { watch: 'no' }, 'watch: must be true or false (got "no")'],
    ['modules that are no list', { modules: {} }, 'modules: must be a list of modules (got an object)'],
    [
      'a module whose app is no Koa app',
      { modules: [{ name: 'x', app: 42 }] },
      'modules[0].app: must be a Koa app (got 42)',
    ],
    [
      'a module without a name',
      { modules: [{ app: undefined }] },
      'modules[0].name: must be a string that is not empty (got nothing)',
    ],
    [
      'a module whose close is no function',
      { modules: [{ name: 'x', close: true }] },
      'modules[0].close: must be a function (got true)',
    ],
    ['options that are null', null, 'the options: must be an object (got null)'],
    [
      'two modules of one name, of which only the last would be routed to',
      { modules: [{ name: 'weather' }, { name: 'weather' }] },
      "modules[1].name: must be a name of its own ('weather' is the name of modules[0] too)",
    ],
    [
      'TLS without its key file',
      { tls: { cert: './cert.pem' } },
      'tls.key: must be the path of a PEM file (got nothing)',
    ],
    [
      'TLS with a field it has not',
      { tls: { cert: './cert.pem', key: './key.pem', ca: './ca.pem' } },
      'tls.ca: there is no such option; tls has cert and key, the paths of the PEM files',
    ],
    [
      'a logger that is no logger',
      { logger: {} },
      'logger: must be a pino logger, with child, info, warn, error (it has no child, info, warn, error)',
    ],
    [
      'a config source without its methods',
      { configSource: { list: () => [] } },
      'configSource: must be a source of config files, with list, read (it has no read)',
    ],
    ['an option of the command line alone', { tlsCert: './cert.pem' }, /^there is no option 'tlsCert'; /],
  ];
  for (const [what, options, message] of mistyped) {
    it(`refuses ${what}, from JavaScript, with a TypeError saying what it must be`, async () => {
      const given =
        options === null ? null : { configDir: DEMO_CONFIG, grpcPort: false, watch: false, ...(options as object) };
      await assert.rejects(createGatehouse(given as never), (err: Error) => {
        assert.equal(err.name, 'TypeError');
        if (typeof message === 'string') assert.equal(err.message, message);
        else assert.match(err.message, message);
        return true;
      });
    });
  }

  it('reads the body limit, trust in a proxy, the shutdown grace and the keep-alive timeout from the environment, and refuses them malformed', () => {
    const read = resolveOptions(
      {},
      { BODY_LIMIT: '4k', TRUST_PROXY: 'true', SHUTDOWN_GRACE_MS: '2500', KEEP_ALIVE_TIMEOUT_MS: '30000' },
    );
    assert.deepEqual(
      [read.bodyLimit, read.trustProxy, read.shutdownGraceMs, read.keepAliveTimeoutMs],
      [4096, true, 2500, 30000],
    );
    const defaults = resolveOptions({}, {});
    assert.deepEqual(
      [defaults.bodyLimit, defaults.trustProxy, defaults.shutdownGraceMs, defaults.keepAliveTimeoutMs],
      [1024 * 1024, false, 10_000, 65_000],
    );
    assert.equal(
      resolveOptions({ trustProxy: false }, { TRUST_PROXY: 'true' }).trustProxy,
      false,
      'an option in code wins',
    );
    assert.throws(() => resolveOptions({}, { BODY_LIMIT: 'lots' }), /BODY_LIMIT/);
    assert.throws(
      () => resolveOptions({}, { TRUST_PROXY: 'yes please' }),
      /^OptionError: TRUST_PROXY: must be true or false \(got "yes please"\)$/,
    );
    assert.throws(
      () => resolveOptions({}, { SHUTDOWN_GRACE_MS: '-1' }),
      /^OptionError: SHUTDOWN_GRACE_MS: must be an integer of 0 or more \(milliseconds\) \(got "-1"\)$/,
    );
    assert.throws(
      () => resolveOptions({}, { KEEP_ALIVE_TIMEOUT_MS: '1.5' }),
      /^OptionError: KEEP_ALIVE_TIMEOUT_MS: must be an integer of 0 or more \(milliseconds\) \(got "1\.5"\)$/,
    );
  });

  it('keeps idle keep-alive connections 65 s, or as long as keepAliveTimeoutMs says, and tells clients so', async () => {
    for (const [option, header] of [
      [{}, 'timeout=65'],
      [{ keepAliveTimeoutMs: 620_000 }, 'timeout=620'],
    ] as const) {
      const gatehouse = await createGatehouse({
        configDir: DEMO_CONFIG,
        port: 0,
        grpcPort: false,
        watch: false,
        drainDelayMs: 0,
        bookingStore: 'memory',
        ...option,
      });
      const { url } = await gatehouse.start();
      try {
        const res = await fetch(`${url}/gateway/v0/check_alive`);
        assert.equal(res.headers.get('keep-alive'), header);
        await res.text();
      } finally {
        await gatehouse.stop();
      }
    }
  });

  it('takes 0 for the ports, the body limit and the times', async () => {
    const gatehouse = await createGatehouse({
      configDir: DEMO_CONFIG,
      port: 0,
      grpcPort: false,
      bodyLimit: 0,
      shutdownGraceMs: 0,
      reloadDebounceMs: 0,
      drainDelayMs: 0,
      bookingStore: 'memory',
      watch: false,
    });
    const { port } = await gatehouse.start();
    assert.ok(port > 0);
    await gatehouse.stop();
  });

  it('reads files up to 8 MiB, or GATEHOUSE_FILE_SIZE_LIMIT, or fileSizeLimit, which wins', () => {
    assert.equal(resolveOptions({}, {}).fileSizeLimit, 8 * 1024 * 1024);
    assert.equal(resolveOptions({}, { GATEHOUSE_FILE_SIZE_LIMIT: '' }).fileSizeLimit, 8 * 1024 * 1024);
    assert.equal(resolveOptions({}, { GATEHOUSE_FILE_SIZE_LIMIT: '16m' }).fileSizeLimit, 16 * 1024 * 1024);
    assert.equal(resolveOptions({ fileSizeLimit: 1000 }, { GATEHOUSE_FILE_SIZE_LIMIT: '16m' }).fileSizeLimit, 1000);
    assert.throws(
      () => resolveOptions({}, { GATEHOUSE_FILE_SIZE_LIMIT: '16 MB' }),
      /^OptionError: GATEHOUSE_FILE_SIZE_LIMIT: must be a number of bytes of 1 or more \(512k, 16m, 1g\) \(got "16 MB"\)$/,
    );
  });

  it('takes the cluster domain from GATEHOUSE_CLUSTER_DOMAIN, cluster.local without it, and names the variable when it is wrong', () => {
    assert.equal(resolveOptions({}, {}).clusterDomain, 'cluster.local');
    assert.equal(resolveOptions({}, { GATEHOUSE_CLUSTER_DOMAIN: 'k8s.example.com' }).clusterDomain, 'k8s.example.com');
    assert.equal(
      resolveOptions({ clusterDomain: 'mesh.local' }, { GATEHOUSE_CLUSTER_DOMAIN: 'k8s.example.com' }).clusterDomain,
      'mesh.local',
    );
    assert.throws(
      () => resolveOptions({}, { GATEHOUSE_CLUSTER_DOMAIN: 'cluster.local.' }),
      /^OptionError: GATEHOUSE_CLUSTER_DOMAIN: must be a DNS domain such as cluster\.local \(got "cluster\.local\."\)$/,
    );
  });

  it('holds its gRPC rate-limit service to the bounds it is given', async () => {
    const gatehouse = await createGatehouse({
      configDir: DEMO_CONFIG,
      port: 0,
      grpcPort: 0,
      watch: false,
      drainDelayMs: 0,
      bookingStore: 'memory',
      maxDescriptorEntries: 2,
      grpcMaxMessageBytes: 1024,
    });
    const { grpcPort } = await gatehouse.start();
    const clients = grpcClients(`127.0.0.1:${grpcPort}`);
    try {
      const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: 'v' }));
      assert.equal(
        (await unary(clients.envoy, 'ShouldRateLimit', { domain: 'gateway', descriptors: [{ entries: entries(2) }] }))
          .overall_code,
        'OK',
      );
      await assert.rejects(
        unary(clients.envoy, 'ShouldRateLimit', { domain: 'gateway', descriptors: [{ entries: entries(3) }] }),
        (err: grpc.ServiceError) => {
          return err.code === grpc.status.INVALID_ARGUMENT && /at most 2 entries, this one 3/.test(err.details);
        },
      );
      await assert.rejects(
        unary(clients.envoy, 'ShouldRateLimit', { domain: 'x'.repeat(2000) }),
        (err: grpc.ServiceError) => err.code === grpc.status.RESOURCE_EXHAUSTED,
      );
    } finally {
      clients.close();
      await gatehouse.stop();
    }
  });

  it('ends a gRPC call whose request does not arrive within grpcRequestTimeoutMs, and closes a connection past grpcMaxConnections', async () => {
    const gatehouse = await createGatehouse({
      configDir: DEMO_CONFIG,
      port: 0,
      grpcPort: 0,
      watch: false,
      drainDelayMs: 0,
      bookingStore: 'memory',
      grpcMaxConnections: 1,
      grpcRequestTimeoutMs: 200,
    });
    const { grpcPort } = await gatehouse.start();
    const session = http2.connect(`http://127.0.0.1:${grpcPort}`);
    session.on('error', () => {});
    try {
      const stalled = session.request(
        {
          ':method': 'POST',
          ':path': '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
          'content-type': 'application/grpc',
          te: 'trailers',
        },
        { endStream: false },
      );
      stalled.on('error', () => {});
      const [headers] = (await once(stalled, 'response')) as [http2.IncomingHttpHeaders];
      assert.equal(headers['grpc-status'], String(grpc.status.DEADLINE_EXCEEDED));
      // The one connection allowed is the session's: another is closed as it comes.
      const second = net.connect(grpcPort!, '127.0.0.1');
      second.on('error', () => {});
      // A reset is a close too: events.once would reject on its 'error'.
      await new Promise((resolve) => second.once('close', resolve));
    } finally {
      session.destroy();
      await gatehouse.stop();
    }
  });

  it('takes the gRPC connection cap and request timeout from the environment, 4096 and 10 s without it', () => {
    const { grpcMaxConnections, grpcRequestTimeoutMs } = resolveOptions({}, {});
    assert.deepEqual([grpcMaxConnections, grpcRequestTimeoutMs], [4096, 10_000]);
    const env = resolveOptions({}, { GRPC_MAX_CONNECTIONS: '64', GRPC_REQUEST_TIMEOUT_MS: '500' });
    assert.deepEqual([env.grpcMaxConnections, env.grpcRequestTimeoutMs], [64, 500]);
    assert.throws(
      () => resolveOptions({}, { GRPC_MAX_CONNECTIONS: '0' }),
      /^OptionError: GRPC_MAX_CONNECTIONS: must be an integer of 1 or more \(got "0"\)$/,
    );
  });

  it('drains 5 s by default, sends gRPC messages of up to 64 KiB and descriptors of up to 64 entries, or as the environment says', () => {
    assert.deepEqual(pick(resolveOptions({}, {})), {
      drainDelayMs: 5000,
      grpcMaxMessageBytes: 65536,
      maxDescriptorEntries: 64,
    });
    const env = { DRAIN_DELAY_MS: '0', GRPC_MAX_MESSAGE_BYTES: '1048576', MAX_DESCRIPTOR_ENTRIES: '8' };
    assert.deepEqual(pick(resolveOptions({}, env)), {
      drainDelayMs: 0,
      grpcMaxMessageBytes: 1048576,
      maxDescriptorEntries: 8,
    });
    // Code wins over the environment.
    assert.equal(resolveOptions({ drainDelayMs: 15_000 }, env).drainDelayMs, 15_000);
    assert.throws(
      () => resolveOptions({}, { DRAIN_DELAY_MS: '5s' }),
      /^OptionError: DRAIN_DELAY_MS: must be an integer of 0 or more \(milliseconds\) \(got "5s"\)$/,
    );
    assert.throws(
      () => resolveOptions({}, { MAX_DESCRIPTOR_ENTRIES: '0' }),
      /^OptionError: MAX_DESCRIPTOR_ENTRIES: must be an integer of 1 or more \(got "0"\)$/,
    );
  });

  it('waits 5 s for the bookings database by default, or as DATABASE_TIMEOUT_MS says, and code wins over it', () => {
    assert.equal(resolveOptions({}, {}).databaseTimeoutMs, 5000);
    assert.equal(resolveOptions({}, { DATABASE_TIMEOUT_MS: '250' }).databaseTimeoutMs, 250);
    assert.equal(resolveOptions({ databaseTimeoutMs: 900 }, { DATABASE_TIMEOUT_MS: '250' }).databaseTimeoutMs, 900);
    assert.throws(
      () => resolveOptions({}, { DATABASE_TIMEOUT_MS: '0' }),
      /^OptionError: DATABASE_TIMEOUT_MS: must be an integer of 1 or more \(milliseconds\) \(got "0"\)$/,
    );
  });
});

function pick(o: { drainDelayMs: number; grpcMaxMessageBytes: number; maxDescriptorEntries: number }) {
  return {
    drainDelayMs: o.drainDelayMs,
    grpcMaxMessageBytes: o.grpcMaxMessageBytes,
    maxDescriptorEntries: o.maxDescriptorEntries,
  };
}
