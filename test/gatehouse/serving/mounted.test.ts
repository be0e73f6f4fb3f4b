/**
 * Gatehouse mounted in a host app answers as it answers alone, whatever the
 * host set on the context before it: the host's trust in a proxy, a status,
 * a request id, and who hears a module's unexpected errors.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import mount from 'koa-mount';
import { createGatehouse, type Gatehouse, type GatehouseOptions } from '../../../src/gatehouse';
import { createServiceApp } from '../../../src/http';
import { createLogger } from '../../../src/telemetry';
import { captureLog, type LogCapture } from '../../support/log-capture';

const EXTRA_MAPPINGS = `apiVersion: gateway/v1
kind: Mapping
name: public-hotels
prefix: /v1/hotels
hostname: public.example
rewrite: ""
service: hotel-booking
bypass_auth: true
precedence: 10
---
apiVersion: gateway/v1
kind: Mapping
name: echo
prefix: /echo/
service: echo
bypass_auth: true
---
apiVersion: gateway/v1
kind: Mapping
name: service-app-failing
prefix: /failing-service/
service: failing-service
bypass_auth: true
---
apiVersion: gateway/v1
kind: Mapping
name: koa-app-failing
prefix: /failing-koa/
service: failing-koa
bypass_auth: true
`;

/** What a host app with middleware of its own before the mount does to every request. */
interface HostSetup {
  proxy: boolean;
  /** Set as the response's status before the mount. */
  status?: number;
  /** Set as the response's X-Request-Id before the mount. */
  requestId?: string;
}

interface Rig {
  base: string;
  log: LogCapture;
  heard: string[];
  close(): Promise<void>;
}

async function mountedRig(host: HostSetup, options: Partial<GatehouseOptions> = {}): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-mounted-'));
  cpSync('config', dir, { recursive: true });
  writeFileSync(join(dir, 'mounted.yaml'), EXTRA_MAPPINGS);
  const echo = createServiceApp();
  echo.use((ctx) => {
    ctx.body = { requestId: ctx.get('x-request-id'), protocol: ctx.protocol, host: ctx.host };
  });
  const failingService = createServiceApp();
  failingService.use(() => {
    throw new Error('the service app failed');
  });
  const failingKoa = new Koa();
  failingKoa.use(() => {
    throw new Error('the plain Koa app failed');
  });
  const log = captureLog();
  const gatehouse: Gatehouse = await createGatehouse({
    configDir: dir,
    grpcPort: false,
    watch: false,
    bookingStore: 'memory',
    logger: createLogger({ level: 'info', destination: log }),
    modules: [
      { name: 'echo', app: echo },
      { name: 'failing-service', app: failingService },
      { name: 'failing-koa', app: failingKoa },
    ],
    ...options,
  });
  const app = new Koa({ proxy: host.proxy });
  const heard: string[] = [];
  app.on('error', (err: Error) => heard.push(err.message));
  app.use((ctx, next) => {
    // A host's logging middleware reads the client's address before anything is routed.
    void ctx.ip;
    if (host.status !== undefined) ctx.status = host.status;
    if (host.requestId !== undefined) ctx.set('X-Request-Id', host.requestId);
    return next();
  });
  app.use(mount('/gw', gatehouse.app));
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    heard,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await gatehouse.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const FORWARDED_BY_CLIENT = {
  'X-Forwarded-Host': 'public.example',
  'X-Forwarded-Proto': 'https',
  'X-Forwarded-For': '203.0.113.9',
};

describe('Gatehouse mounted in a host app', function () {
  it("believes a client's X-Forwarded-* only as its own trustProxy says, not as the host app's proxy does", async () => {
    const rig = await mountedRig({ proxy: true });
    try {
      const hotels = await fetch(`${rig.base}/gw/v1/hotels/`, { headers: FORWARDED_BY_CLIENT });
      assert.equal(
        hotels.status,
        401,
        'the Mapping for public.example, which needs no credentials, was chosen by the client',
      );
      const echoed = await fetch(`${rig.base}/gw/echo/`, { headers: FORWARDED_BY_CLIENT });
      const body = (await echoed.json()) as { protocol: string; host: string };
      assert.deepEqual([body.protocol, body.host], ['http', new URL(rig.base).host]);
      const line = await rig.log.requestLine(echoed.headers.get('x-request-id') ?? undefined);
      assert.equal(line.remote, '127.0.0.1', 'the access log names the peer, not the address the client wrote');
    } finally {
      await rig.close();
    }
  });

  it("believes a proxy's X-Forwarded-* with trustProxy on, in a host app that trusts none", async () => {
    const rig = await mountedRig({ proxy: false }, { trustProxy: true });
    try {
      const hotels = await fetch(`${rig.base}/gw/v1/hotels/`, { headers: FORWARDED_BY_CLIENT });
      assert.equal(hotels.status, 200, 'the Mapping for public.example');
      const res = await fetch(`${rig.base}/gw/echo/`, { headers: FORWARDED_BY_CLIENT });
      const echoed = (await res.json()) as { protocol: string; host: string };
      assert.deepEqual([echoed.protocol, echoed.host], ['https', 'public.example']);
      const line = await rig.log.requestLine(res.headers.get('x-request-id') ?? undefined);
      assert.equal(line.remote, '203.0.113.9');
    } finally {
      await rig.close();
    }
  });

  it('answers with its own status, not one the host set before it, and keeps its body for a status that has none', async () => {
    for (const status of [201, 204, 500]) {
      const rig = await mountedRig({ proxy: false, status });
      try {
        const res = await fetch(`${rig.base}/gw/v1/messages/1`);
        assert.equal(res.status, 200, `host status ${status}`);
        assert.equal(((await res.json()) as { id: string }).id, '1');
        assert.equal((await fetch(`${rig.base}/gw/v1/messages/99`)).status, 404);
      } finally {
        await rig.close();
      }
    }
  });

  it('takes the request id the host gave the response for the request, in its answer, its log and to the module', async () => {
    const rig = await mountedRig({ proxy: false, requestId: 'host-request-7' });
    try {
      const res = await fetch(`${rig.base}/gw/echo/`);
      assert.equal(res.headers.get('x-request-id'), 'host-request-7');
      assert.equal(((await res.json()) as { requestId: string }).requestId, 'host-request-7');
      assert.equal((await rig.log.requestLine('host-request-7')).route, 'echo');
      const sent = await fetch(`${rig.base}/gw/echo/`, { headers: { 'X-Request-Id': 'client-request-8' } });
      assert.equal(sent.headers.get('x-request-id'), 'client-request-8', "a client's own id is still the request's");
    } finally {
      await rig.close();
    }
  });

  it("logs a module's unexpected error and lets the host's error listeners hear it, a service app's and a plain Koa app's alike", async () => {
    const rig = await mountedRig({ proxy: false });
    try {
      for (const path of ['/gw/failing-service/x', '/gw/failing-koa/x']) {
        const res = await fetch(`${rig.base}${path}`);
        assert.equal(res.status, 500, path);
        assert.equal(((await res.json()) as { code: number }).code, 500);
      }
      const logged = rig.log.lines
        .filter((l) => l.msg === 'unexpected error')
        .map((l) => (l.err as { message: string }).message);
      assert.deepEqual(logged, ['the service app failed', 'the plain Koa app failed']);
      assert.deepEqual(rig.heard, ['the service app failed', 'the plain Koa app failed']);
    } finally {
      await rig.close();
    }
  });
});
