/**
 * @module test/support/tcp-proxy
 * A TCP proxy on a free loopback port in front of a real server, for the
 * tests of what a client does when its server goes away: `hang()` keeps
 * every connection open and passes nothing (a server that stopped
 * answering, a network that drops packets), `refuse()` closes them and the
 * port (a server that is down), `restore()` undoes either. Its port is
 * below the ephemeral range, so that nothing else answers there once refused.
 */
import net from 'node:net';
import { listenBelowEphemeralRange } from './ports';

export interface TcpProxy {
  readonly port: number;
  /** Stops passing bytes either way; connections stay open, new ones are taken and hang too. */
  hang(): void;
  /** Closes every connection and the port: connecting is refused. */
  refuse(): Promise<void>;
  /** Passes bytes again (after `hang`), or listens again on the same port (after `refuse`). */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const pairs = new Set<[net.Socket, net.Socket]>();
  // Bytes held while hung, in order, with where they go: delivered on restore, as a stalled network delivers them late.
  const held: [net.Socket, Buffer][] = [];
  let hung = false;
  const forward = (from: net.Socket, to: net.Socket) =>
    from.on('data', (chunk: Buffer) => {
      if (hung) held.push([to, chunk]);
      else to.write(chunk);
    });
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, targetHost);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    forward(client, upstream);
    forward(upstream, client);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const port = await listenBelowEphemeralRange(server);
  const closeServer = () =>
    new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  const dropAll = () => {
    for (const [a, b] of pairs) {
      a.destroy();
      b.destroy();
    }
    pairs.clear();
  };
  return {
    port,
    hang() {
      hung = true;
    },
    async refuse() {
      const closed = closeServer();
      dropAll();
      held.length = 0;
      await closed;
    },
    async restore() {
      hung = false;
      for (const [to, chunk] of held.splice(0)) if (!to.destroyed) to.write(chunk);
      if (!server.listening) await listen(port);
    },
    async close() {
      const closed = closeServer();
      dropAll();
      await closed;
    },
  };
}
