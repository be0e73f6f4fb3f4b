/**
 * @module test/support/ports
 * Loopback ports for tests: one free to listen on, which is also one that
 * nobody listens on, to be refused.
 *
 * They are taken below the kernel's ephemeral range (32768–60999 on Linux).
 * A port from that range, once closed, can be handed to the next server that
 * listens on port 0 (the gateway's own, say) or be the source port of a
 * connection to itself; a client meant to be refused would then talk to
 * something else, and a server meant to listen there would find it taken.
 */
import net from 'node:net';

const BELOW_EPHEMERAL = { from: 20000, to: 32767 };

/** Listens on a free port of 127.0.0.1 below the ephemeral range, and says which. */
export async function listenBelowEphemeralRange(server: net.Server): Promise<number> {
  for (let tries = 0; ; tries++) {
    const port = BELOW_EPHEMERAL.from + Math.floor(Math.random() * (BELOW_EPHEMERAL.to - BELOW_EPHEMERAL.from + 1));
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
      return port;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || tries >= 100) throw err;
    }
  }
}

/** A port of 127.0.0.1 that was free a moment ago and that no server given port 0 will take. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  const port = await listenBelowEphemeralRange(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
