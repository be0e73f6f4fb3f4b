/**
 * @module ports/bound-port
 * A listening port bound before the server that serves it exists. A process
 * that binds its ports first learns that one is taken before it does
 * anything slow or lasting (making and migrating a database), and no other
 * process can take the port meanwhile. A connection that comes before the
 * server is there waits, unread, as it would in the kernel's queue, and is
 * the server's first once the port is handed to it.
 */
import { lookup } from 'node:dns/promises';
import { once } from 'node:events';
import net from 'node:net';
import { listenOptions } from './listen-at';

/** One address of a bound port. */
export interface BoundListener {
  /** The address bound (an IP address; empty for every interface). */
  readonly address: string;
  /**
   * Has `server` listen on this socket instead of one of its own (Node's
   * `server.listen(handle)`), then gives it the connections that came
   * meanwhile, as its own `connection` events. Once only; resolves once
   * `server` listens.
   */
  handTo(server: net.Server): Promise<void>;
}

/** A port bound on every address its host names. */
export interface BoundPort {
  /** The host asked for. */
  readonly host: string;
  /** The port bound: the one asked for, or the one the system chose for 0. */
  readonly port: number;
  readonly listeners: readonly BoundListener[];
  /** Closes what was not handed to a server, and the connections that wait on it. */
  close(): Promise<void>;
}

export interface BindOptions {
  /**
   * Bind every address the host name resolves to (`localhost`: 127.0.0.1
   * and ::1, as grpc-js binds), failing only when none can be bound; else
   * the first, as Node's `server.listen(port, host)` does. Default false.
   */
  everyAddress?: boolean;
  /** Bind beside other sockets on the same port (`SO_REUSEPORT`), as each worker of a gateway does. */
  reusePort?: boolean;
}

/** The addresses to bind for `host`: itself if an IP address (or empty, for every interface), else what it resolves to. */
async function addressesOf(host: string, every: boolean): Promise<string[]> {
  if (host === '' || net.isIP(host) !== 0) return [host];
  if (!every) return [(await lookup(host)).address];
  const found = await lookup(host, { all: true });
  return [...new Set(found.map((a) => a.address))];
}

/** Listens on `address:port`, holding each connection unread until the socket is handed over. */
async function bindOne(
  address: string,
  port: number,
  reusePort: boolean,
): Promise<BoundListener & { port: number; close(): Promise<void> }> {
  const early = net.createServer({ pauseOnConnect: true });
  const waiting = new Set<net.Socket>();
  const hold = (socket: net.Socket) => {
    waiting.add(socket);
    // A client that gives up while it waits is its own business.
    socket.on('error', () => {});
    socket.once('close', () => waiting.delete(socket));
  };
  early.on('connection', hold);
  early.listen(listenOptions({ host: address, port, reusePort }));
  // once() rejects with the server's 'error' (EADDRINUSE, EACCES) while it waits.
  await once(early, 'listening');
  let handed = false;
  return {
    address,
    port: (early.address() as net.AddressInfo).port,
    async handTo(server) {
      if (handed) throw new Error(`the port ${address}:${port} is handed over already`);
      handed = true;
      early.off('connection', hold);
      server.listen(early);
      await once(server, 'listening');
      for (const socket of waiting) {
        socket.removeAllListeners('error');
        server.emit('connection', socket);
        // Held unread (pauseOnConnect): reading starts once the server has it.
        socket.resume();
      }
      waiting.clear();
    },
    async close() {
      if (handed) return;
      handed = true;
      const closed = new Promise((resolve) => early.close(resolve));
      for (const socket of waiting) socket.destroy();
      waiting.clear();
      await closed;
    },
  };
}

/**
 * Binds `host:port` (0 for a port the system chooses). Rejects with the
 * system's error (`EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL`, a name that does
 * not resolve), binding nothing.
 */
export async function bindPort(host: string, port: number, options: BindOptions = {}): Promise<BoundPort> {
  const bound: Awaited<ReturnType<typeof bindOne>>[] = [];
  let failure: unknown;
  let at = port;
  for (const address of await addressesOf(host, options.everyAddress ?? false)) {
    try {
      // Every address on the one port: the port chosen for the first when 0 was asked.
      const one = await bindOne(address, at, options.reusePort ?? false);
      bound.push(one);
      at = one.port;
    } catch (err) {
      failure ??= err;
    }
  }
  if (bound.length === 0) throw failure;
  return {
    host,
    port: at,
    listeners: bound,
    async close() {
      await Promise.all(bound.map((one) => one.close()));
    },
  };
}
