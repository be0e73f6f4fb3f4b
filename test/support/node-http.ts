/**
 * @module test/support/node-http
 * What the HTTP server of the Node running the tests does where Node's
 * majors differ, found by asking it rather than by its version number.
 */
import http from 'node:http';
import net from 'node:net';
import { close, listenLocal } from './server';

let refusesPastCount: Promise<boolean> | undefined;

/**
 * Whether Node's parser refuses a request with more header fields than its
 * server's `maxHeadersCount` (431 before the app has it: Node 22 and 24),
 * rather than hand the app the request with the fields past the count
 * dropped (Node 20).
 */
export function nodeRefusesFieldsPastCount(): Promise<boolean> {
  refusesPastCount ??= (async () => {
    const server = http.createServer((_req, res) => res.end());
    server.maxHeadersCount = 1;
    const address = await listenLocal(server);
    try {
      const reply = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(address.split(':')[1]), '127.0.0.1', () =>
          socket.end('GET / HTTP/1.1\r\nHost: x\r\nA: b\r\nConnection: close\r\n\r\n'),
        );
        let text = '';
        socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        socket.on('error', reject).on('close', () => resolve(text));
      });
      return reply.startsWith('HTTP/1.1 431 ');
    } finally {
      await close(server);
    }
  })();
  return refusesPastCount;
}
