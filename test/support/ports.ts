/**
 * @module test/support/ports
 * Loopback ports for tests: one free to listen on, which is also one that
 * nobody listens on, to be refused.
 */
import net from 'node:net';

/** A port of 127.0.0.1 that was free a moment ago: opened, then closed. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
