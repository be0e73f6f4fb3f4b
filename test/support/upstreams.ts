/**
 * @module test/support/upstreams
 * Upstreams for the gateway under test: node:http servers on 127.0.0.x that
 * record what they receive; a test upstream also answers with a status
 * chosen per request, holds requests until released, or hangs up.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { close, listen } from './server';

/** What a recording upstream received. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

/** A plain node server recording every request; `respond` answers it (default: 200 `ok`). */
export async function recordingUpstream(
  respond: (req: http.IncomingMessage, res: http.ServerResponse, received: Received) => void = (_req, res) => {
    res.setHeader('Content-Type', 'text/plain');
    res.end('ok');
  },
): Promise<{ server: http.Server; url: string; port: number; received: Received[] }> {
  const received: Received[] = [];
  const up = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
      };
      received.push(r);
      respond(req, res, r);
    });
  });
  return { ...up, received };
}

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
