/**
 * @module test/support/server
 * Servers on 127.0.0.1 and a free port, and their closing: a plain request
 * listener, a Koa app, or a server a test made itself (https, http2).
 */
import http from 'node:http';
import type Koa from 'koa';
import type { AddressInfo, Server } from 'node:net';

/** Listens on 127.0.0.1, any port; resolves `host:port`. */
export function listenLocal(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(`127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
  });
}

/** A server on 127.0.0.1 and a random port. */
export async function listen(
  handler: http.RequestListener,
): Promise<{ server: http.Server; url: string; port: number }> {
  const server = http.createServer(handler);
  const address = await listenLocal(server);
  return { server, url: `http://${address}`, port: (server.address() as AddressInfo).port };
}

/** Closes a server, dropping idle keep-alive connections; a server that is not listening is left as it is. */
export async function close(server: http.Server | undefined): Promise<void> {
  if (!server || !server.listening) return;
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
}

/** A Koa app listening on 127.0.0.1 on a free port. */
export interface Served {
  server: http.Server;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  close(): Promise<void>;
}

/** Serves an app on a free port of 127.0.0.1. */
export async function serve(app: Koa): Promise<Served> {
  const { server, url } = await listen(app.callback());
  return { server, origin: url, close: () => close(server) };
}
