/**
 * @module test/support/upstreams
 * Upstreams for the tests of remote upstreams: node:http servers on 127.0.0.x
 * that record what they receive, answer with a status chosen per request,
 * hold requests until released, or hang up; a resolver that knows the names
 * a test gives it; a clock a test moves; and a gateway over them that
 * records its events.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createGateway, type Gateway, type Resolve } from '../../src/gateway';
import type { GatewayEvents } from '../../src/gateway';
import { close, configOf, listen } from './client';

/** What one test upstream received. */
export interface Got {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Which of the server's connections carried it, counted from 1. */
  connection: number;
}

/** How a test upstream answers one request: a status, `'hold'`, or `'hangup'`. */
export type Reply = number | 'hold' | 'hangup';

export interface TestUpstream {
  readonly server: http.Server;
  readonly host: string;
  readonly port: number;
  /** `host:port`. */
  readonly address: string;
  readonly got: Got[];
  /** Connections accepted so far, and those closed. */
  readonly connections: { opened: number; closed: number };
  /** How it answers the next requests, in turn; once they are used up, `fallback`. */
  replies: Reply[];
  fallback: Reply;
  /** Answers every held request with 200. */
  release(): void;
  /** Requests held now. */
  held(): number;
  /** Resolves once `n` requests are held. */
  holding(n: number): Promise<void>;
  /** Resolves once a connection to it closed (the `n`th, counted from 1). */
  closedConnection(n: number): Promise<void>;
  close(): Promise<void>;
}

/** A test upstream on `host` (127.0.0.1 by default) and `port` (by default a free one), whose answers carry `extraHeaders`. */
export async function testUpstream(
  host = '127.0.0.1',
  extraHeaders: Record<string, string> = {},
  port = 0,
): Promise<TestUpstream> {
  const got: Got[] = [];
  const held: http.ServerResponse[] = [];
  const waiters: (() => void)[] = [];
  const connections = { opened: 0, closed: 0 };
  const numbers = new WeakMap<Socket, number>();
  const upstream: TestUpstream = {
    server: undefined as unknown as http.Server,
    host,
    port: 0,
    address: '',
    got,
    connections,
    replies: [],
    fallback: 200,
    release() {
      for (const res of held.splice(0)) res.end('released');
    },
    held: () => held.length,
    holding(n) {
      return new Promise((resolve) => {
        const check = () => (held.length >= n ? resolve() : waiters.push(check));
        check();
      });
    },
    closedConnection(n) {
      return new Promise((resolve) => {
        const check = () => (connections.closed >= n ? resolve() : waiters.push(check));
        check();
      });
    },
    close: () => close(upstream.server),
  };
  const wake = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        connection: numbers.get(req.socket)!,
      });
      const reply = upstream.replies.shift() ?? upstream.fallback;
      if (reply === 'hangup') return req.socket.destroy();
      res.setHeader('X-Served-By', `${host}:${upstream.port}`);
      for (const [name, value] of Object.entries(extraHeaders)) res.setHeader(name, value);
      if (reply === 'hold') {
        held.push(res);
        wake();
        return;
      }
      res.statusCode = reply;
      res.end(`${reply} from ${host}`);
    });
  });
  server.on('connection', (socket: Socket) => {
    numbers.set(socket, ++connections.opened);
    socket.on('close', () => {
      connections.closed++;
      wake();
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  const bound = (server.address() as AddressInfo).port;
  return Object.assign(upstream, { server, port: bound, address: `${host}:${bound}` });
}

/** A resolver that knows `names` (name → addresses; a name it does not know is ENOTFOUND), and counts its lookups. */
export function testResolver(names: Record<string, string[]>): Resolve & { lookups: string[] } {
  const lookups: string[] = [];
  const resolve = (async (hostname: string): Promise<string[]> => {
    lookups.push(hostname);
    const found = names[hostname];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  }) as unknown as Resolve & { lookups: string[] };
  resolve.lookups = lookups;
  return resolve;
}

/** A clock that moves only when a test moves it. */
export function testClock(): { now: () => number; advance(ms: number): void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

/** What a gateway reported. */
export interface Reported {
  retries: string[];
  overflows: string[];
  ejections: string[];
  errors: string[];
}

export interface TestGateway {
  readonly gateway: Gateway;
  readonly base: string;
  readonly reported: Reported;
  close(): Promise<void>;
}

/** A gateway serving `records`, with the resolver and clock given, that records its events. */
export async function testGateway(
  records: unknown[],
  options: { resolve?: Resolve; now?: () => number; retryBufferBytes?: number; clusterDomain?: string } = {},
): Promise<TestGateway> {
  const reported: Reported = { retries: [], overflows: [], ejections: [], errors: [] };
  const events: GatewayEvents = {
    upstreamRetry: (route) => reported.retries.push(route),
    upstreamOverflow: (cluster, limit) => reported.overflows.push(`${cluster} ${limit}`),
    upstreamEjection: (cluster, endpoint) => reported.ejections.push(`${cluster} ${endpoint}`),
    upstreamError: (route, kind) => reported.errors.push(`${route} ${kind}`),
  };
  const gateway = createGateway({ config: configOf(...records), events, upstreams: options });
  const { server, url } = await listen(gateway.app.callback());
  return {
    gateway,
    base: url,
    reported,
    async close() {
      await close(server);
      await gateway.close();
    },
  };
}
