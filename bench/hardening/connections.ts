/**
 * @module bench/hardening/connections
 * Two bounds on connections, measured: when a WebSocket handshake sent a
 * header a second gets its 408 (docs/security.md promises 60 s), and how
 * long the event loop is held while the largest rate-limit call the gRPC
 * port takes is made over and over.
 */
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRateLimitClient, ENVOY_V3_SERVICE, type RateLimitRequest } from '../../src/ratelimit';
import { requestToProto } from '../../src/ratelimit/grpc/messages/codec';
import { methodOf } from '../../src/ratelimit/grpc/protos';
import { cpuMicros } from '../harness/processes';
import { probeWhile, startGateway, type Probe } from './gateway';

const ROUTE = 'apiVersion: gateway/v1\nkind: Mapping\nname: m\nprefix: /\nservice: api\n';

async function withGateway<T>(
  dist: string,
  files: Record<string, string>,
  use: (url: string, log: () => string, pid: number) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-conn-'));
  const config = join(dir, 'config');
  mkdirSync(config);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(config, name), text);
  const gateway = await startGateway(dist, config, join(dir, 'data'));
  try {
    if (gateway.url === undefined) throw new Error(`the gateway did not start:\n${gateway.log()}`);
    return await use(gateway.url, gateway.log, gateway.child.pid!);
  } finally {
    await gateway.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Seconds from the first byte of a handshake sent a header a second to the answer, and the answer's status line. */
export function slowHandshake(dist: string): Promise<{ seconds: number; answer: string }> {
  return withGateway(dist, { 'services.yaml': ROUTE }, async (url) => {
    const { port } = new URL(url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    const started = performance.now();
    socket.write('GET /chat HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n');
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    socket.on('error', () => {});
    let line = 0;
    const writing = setInterval(() => {
      if (!socket.destroyed) socket.write(`X-Slow-${line++}: y\r\n`);
    }, 1000);
    await Promise.race([once(socket, 'close'), new Promise((r) => setTimeout(r, 150_000))]);
    clearInterval(writing);
    socket.destroy();
    return {
      seconds: Math.round((performance.now() - started) / 100) / 10,
      answer: answer.split('\r\n')[0] || '(none)',
    };
  });
}

/**
 * The largest request the gRPC port takes by default: 1000 descriptors (the
 * most a request may carry), each of as many entries as fit in 64 KiB.
 */
function largestRequest(): RateLimitRequest {
  const method = methodOf(ENVOY_V3_SERVICE, 'ShouldRateLimit');
  const request = (entries: number): RateLimitRequest => ({
    domain: 'd',
    descriptors: Array.from({ length: 1000 }, (_, i) => ({
      entries: Array.from({ length: entries }, (_, j) =>
        j === 0 ? { key: 'k', value: `v${i}` } : { key: 'e', value: `${j}` },
      ),
    })),
  });
  let entries = 1;
  while (entries < 64 && method.requestSerialize(requestToProto(request(entries + 1))).length <= 65_536) entries++;
  return request(entries);
}

/** The largest rate-limit call, made back to back for `seconds`, with check_alive asked meanwhile. */
export function largeGrpcCalls(
  dist: string,
  seconds = 5,
): Promise<{
  descriptors: number;
  entries: number;
  calls: number;
  slowestCallMs: number;
  cpuMsPerCall: number;
  checkAlive: Probe;
}> {
  const limits = 'domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 1000000}\n';
  return withGateway(dist, { 'services.yaml': ROUTE, 'ratelimit.yaml': limits }, async (url, log, pid) => {
    const grpcAddress = /gRPC rate limits on ([\d.]+:\d+)/.exec(log())?.[1];
    if (grpcAddress === undefined) throw new Error(`no gRPC address in the log:\n${log().slice(0, 2000)}`);
    const client = createRateLimitClient(grpcAddress, { timeoutMs: 60_000 });
    const request = largestRequest();
    let calls = 0;
    let slowest = 0;
    const until = performance.now() + seconds * 1000;
    const calling = (async () => {
      while (performance.now() < until) {
        const started = performance.now();
        await client.shouldRateLimit(request);
        slowest = Math.max(slowest, performance.now() - started);
        calls++;
      }
    })();
    const checkAlive = await probeWhile(url, calling);
    await calling;
    // The gateway's CPU time a call, the calls one after the other: how long each holds its event loop.
    const before = cpuMicros([pid]);
    for (let i = 0; i < 40; i++) await client.shouldRateLimit(request);
    const cpuMsPerCall = Math.round(((cpuMicros([pid]) - before) / 40 / 1000) * 100) / 100;
    client.close();
    return {
      descriptors: request.descriptors.length,
      entries: request.descriptors[0].entries.length,
      calls,
      slowestCallMs: Math.round(slowest * 10) / 10,
      cpuMsPerCall,
      checkAlive,
    };
  });
}
