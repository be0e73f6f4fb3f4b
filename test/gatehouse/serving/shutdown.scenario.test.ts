import assert from 'node:assert/strict';
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { SAME_STOP_MS } from '../../../src/cli/signals';
import { grpcClients, unary } from '../../support/grpc-clients';
import { acceptsConnections, killAll, startCli, type CliServer } from '../../support/process';
import { copyConfig, type TempConfig } from '../../support/config-folder';
import { eventually } from '../../support/polling';

/** An upstream that holds every request until the test lets it answer. */
function heldUpstream() {
  const held: ServerResponse[] = [];
  const arrived: Array<() => void> = [];
  const server = http.createServer((_req: IncomingMessage, res: ServerResponse) => {
    held.push(res);
    arrived.shift()?.();
  });
  return {
    server,
    /** Resolves when the next request arrives. */
    nextRequest: () => new Promise<void>((resolve) => arrived.push(resolve)),
    answerAll() {
      for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'text/plain' }).end('slow answer');
    },
  };
}

describe('gatehouse process shutdown', function () {
  let config: TempConfig;
  let upstream: ReturnType<typeof heldUpstream>;

  before(async () => {
    upstream = heldUpstream();
    upstream.server.listen(0, '127.0.0.1');
    await once(upstream.server, 'listening');
    const port = (upstream.server.address() as AddressInfo).port;
    config = copyConfig();
    config.write(
      'slow.yaml',
      `apiVersion: gateway/v1\nkind: Mapping\nname: slow\nprefix: /slow/\nservice: http://127.0.0.1:${port}\nbypass_auth: true\ntimeout_ms: 60000\n`,
    );
  });

  after(async () => {
    await killAll();
    upstream?.server.closeAllConnections();
    upstream?.server.close();
    config?.remove();
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`on ${signal}: finishes the request in flight, refuses new connections, closes gRPC and exits 0`, async () => {
      const gatehouse: CliServer = await startCli(['start'], {
        env: { PORT: '0', GRPC_PORT: '0', GATEHOUSE_CONFIG: config.dir, LOG_LEVEL: 'warn' },
      });
      const grpcPort = Number(/gRPC rate limits on [^\s;)]+:(\d+)[;)]/.exec(gatehouse.line)?.[1]);
      assert.ok(grpcPort > 0, gatehouse.line);
      assert.equal(await acceptsConnections(grpcPort), true);

      const arrived = upstream.nextRequest();
      const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port: gatehouse.port, path: '/slow/x', agent: false }, (res) => {
            let body = '';
            res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
            res.on('error', reject);
          })
          .on('error', reject);
      });
      await arrived;
      const exited = once(gatehouse.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
      gatehouse.child.kill(signal);

      // While the request is still held upstream: no new connection, no gRPC.
      await eventually(
        async () => ((await acceptsConnections(gatehouse.port)) ? undefined : true),
        'the HTTP port to refuse connections',
      );
      await eventually(async () => ((await acceptsConnections(grpcPort)) ? undefined : true), 'the gRPC port to close');
      assert.equal(gatehouse.child.exitCode, null, 'still running while a request is in flight');

      upstream.answerAll();
      assert.deepEqual(await response, { status: 200, body: 'slow answer' });
      const [code, killedBy] = await exited;
      assert.deepEqual({ code, killedBy }, { code: 0, killedBy: null }, JSON.stringify(gatehouse.output()));
    });
  }

  it('on SIGTERM with a drain delay: keeps answering, not ready and closing each connection, gRPC health NOT_SERVING; a second signal ends it at once', async () => {
    const gatehouse: CliServer = await startCli(['start', '--drain-delay-ms', '600000'], {
      env: { PORT: '0', GRPC_PORT: '0', GATEHOUSE_CONFIG: config.dir, LOG_LEVEL: 'info' },
    });
    const grpcPort = Number(/gRPC rate limits on [^\s;)]+:(\d+)[;)]/.exec(gatehouse.line)?.[1]);
    gatehouse.child.kill('SIGTERM');
    await eventually(
      async () => (gatehouse.output().stdout.includes('"msg":"draining:') ? true : undefined),
      'the drain to begin',
    );

    const ready = await fetch(`${gatehouse.address}/gateway/v0/check_ready`);
    assert.equal(ready.status, 503);
    assert.equal(((await ready.json()) as { detail: string }).detail, 'not ready: the gateway is shutting down');
    const served = await fetch(`${gatehouse.address}/v1/messages/1`);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('connection'), 'close');
    await served.text();
    const grpc = grpcClients(`127.0.0.1:${grpcPort}`);
    try {
      assert.deepEqual(await unary(grpc.health, 'Check', { service: '' }), { status: 'NOT_SERVING' });
      assert.equal((await unary(grpc.envoy, 'ShouldRateLimit', { domain: 'gateway' })).overall_code, 'OK');
    } finally {
      grpc.close();
    }

    // Another signal within a second of the first is the same stop (npm's copy of a Ctrl-C): one after it ends it at once.
    await sleep(SAME_STOP_MS + 200);
    const exited = once(gatehouse.child, 'exit') as Promise<[number | null]>;
    gatehouse.child.kill('SIGTERM');
    assert.deepEqual(await exited, [1, null]);
  });
});
