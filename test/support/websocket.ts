/**
 * @module test/support/websocket
 * WebSocket peers for the tunnel tests: an upstream (the `ws` package) that
 * records each handshake and echoes, a raw exchange on a socket for what a
 * WebSocket client library hides, a client (undici's WebSocket), and the
 * config records they are routed by.
 */
import type http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { WebSocket } from 'undici';
import { WebSocketServer } from 'ws';

/** A handshake as the upstream saw it. */
export interface Handshake {
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** A WebSocket server on a free port that greets each client with the path it was asked, then echoes. */
export interface EchoUpstream {
  readonly port: number;
  readonly address: string;
  readonly handshakes: Handshake[];
  close(): Promise<void>;
}

export async function echoUpstream(): Promise<EchoUpstream> {
  const handshakes: Handshake[] = [];
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    handleProtocols: (protocols) => (protocols.has('chat.v1') ? 'chat.v1' : false),
  });
  wss.on('headers', (headers) => headers.push('X-Upstream: ws'));
  wss.on('connection', (ws, req) => {
    handshakes.push({ url: req.url ?? '', headers: req.headers });
    ws.send(`hello ${req.url}`);
    ws.on('message', (data, binary) => ws.send(data, { binary }));
  });
  await new Promise((resolve) => wss.once('listening', resolve));
  const { port } = wss.address() as net.AddressInfo;
  return {
    port,
    address: `127.0.0.1:${port}`,
    handshakes,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

/** services.yaml of Mappings given as objects (JSON is YAML), behind the built-in auth and rate-limit services. */
export function servicesYaml(...mappings: Record<string, unknown>[]): string {
  const records = [
    { apiVersion: 'gateway/v1', kind: 'AuthService', name: 'auth', auth_service: 'auth' },
    { apiVersion: 'gateway/v1', kind: 'RateLimitService', name: 'limits', service: 'ratelimit' },
    ...mappings.map((m) => ({ apiVersion: 'gateway/v1', kind: 'Mapping', ...m })),
  ];
  return records.map((r) => JSON.stringify(r)).join('\n---\n');
}

/** Whether `reply` holds a whole answer head: enough of a 101, whose connection stays open. */
export const headDone = (reply: string): boolean => reply.includes('\r\n\r\n');

/** The head of a WebSocket handshake, from `Connection` on. */
export const WEBSOCKET_HEADERS =
  'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n';

/**
 * Sends `text` on a new connection and collects what comes back until the
 * connection closes, or until `until` holds of what came (then `closed` is
 * false, and the connection is dropped). However long that takes: the
 * test's timeout ends a wait for an answer that never comes.
 */
export function exchange(
  port: number,
  text: string,
  options: { until?: (reply: string) => boolean; ca?: Buffer } = {},
): Promise<{ reply: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = options.ca
      ? tls.connect({ host: '127.0.0.1', port, ca: options.ca, servername: 'localhost' }, () => socket.write(text))
      : net.connect(port, '127.0.0.1', () => socket.write(text));
    let reply = '';
    socket.setEncoding('latin1');
    let done = false;
    socket.on('data', (chunk: string) => {
      reply += chunk;
      if (done || !options.until?.(reply)) return;
      done = true;
      resolve({ reply, closed: false });
      socket.destroy();
    });
    socket.on('error', reject);
    socket.on('close', () => {
      if (!done) resolve({ reply, closed: true });
      done = true;
    });
  });
}

/** A connected WebSocket client, with the messages it got, in order. */
export interface Client {
  readonly socket: WebSocket;
  readonly messages: string[];
  /** Resolves with the `count`-th message. */
  message(count: number): Promise<string>;
  /** Resolves with the close code once the connection is closed. */
  readonly closed: Promise<number>;
}

/** Opens a WebSocket (undici's, as a browser's) to `url`; rejects if the handshake fails. */
export function connect(url: string, headers: Record<string, string> = {}, protocols: string[] = []): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers, protocols });
    const messages: string[] = [];
    const waiting: Array<() => void> = [];
    let opened = false;
    const closed = new Promise<number>((done) => socket.addEventListener('close', (event) => done(event.code)));
    socket.addEventListener('message', (event) => {
      messages.push(
        typeof event.data === 'string' ? event.data : Buffer.from(event.data as ArrayBuffer).toString('latin1'),
      );
      for (const wake of waiting.splice(0)) wake();
    });
    socket.addEventListener('error', () => {
      if (!opened) reject(new Error(`the WebSocket handshake to ${url} failed`));
    });
    socket.addEventListener('open', () => {
      opened = true;
      resolve({
        socket,
        messages,
        closed,
        message: (count) =>
          new Promise((done) => {
            const check = () => (messages.length >= count ? done(messages[count - 1]) : waiting.push(check));
            check();
          }),
      });
    });
  });
}
