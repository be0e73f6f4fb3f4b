/**
 * @module test/platform/node-http
 * What src/platform/node-http relies on in Node's HTTP server, checked
 * against the Node running the tests.
 */
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import {
  closeLeavingIdleConnections,
  destroyKeepingSocket,
  NODE_HTTP_WRITTEN_FOR,
  responseInFlight,
  watchBodyAsParsed,
} from '../../src/platform';
import { relies } from '../support/reliance';

const rely = (what: string, holds: boolean, detail?: string) =>
  relies('node', NODE_HTTP_WRITTEN_FOR, what, holds, detail);

async function serve(handler: http.RequestListener): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer(handler).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port };
}

/** Sends `raw` on a new connection and resolves everything the server sent back until it closed or `until` matched. */
function exchange(port: number, raw: string, until?: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(raw));
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      if (until?.test(text)) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

describe('platform/node-http: what Gatehouse relies on in Node HTTP server', () => {
  it('names the response a connection is answering', async () => {
    let seen: http.ServerResponse | null = null;
    let own: http.ServerResponse | undefined;
    const { server, port } = await serve((req, res) => {
      own = res;
      seen = responseInFlight(req.socket);
      res.end('ok');
    });
    try {
      await exchange(port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      rely("keeps a connection's response in flight (socket._httpMessage)", seen !== null && seen === own);
    } finally {
      server.close();
    }
  });

  it('fails a request stream without its socket, so that it can still be answered', async () => {
    const { server, port } = await serve((req, res) => {
      req.on('error', () => undefined);
      destroyKeepingSocket(req);
      req.destroy(new Error('refused body'));
      res.end('answered after all');
    });
    try {
      const answer = await exchange(
        port,
        'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello',
        /answered after all/,
      );
      rely(
        'destroys a request stream through its _destroy, leaving the socket',
        /200 OK[\s\S]*answered after all/.test(answer),
        answer,
      );
    } finally {
      server.close();
    }
  });

  it("hands every chunk of a body, and its end, through the request's push, before any reader", async () => {
    let counted = 0;
    let ends = 0;
    let read = '';
    const { server, port } = await serve((req, res) => {
      watchBodyAsParsed(req, (_req, chunk) => {
        if (chunk === null) return ++ends > 0;
        counted += chunk.length;
        // The second chunk is refused: no reader may see it.
        return !chunk.toString().startsWith('refused');
      });
      req.setEncoding('utf8').on('data', (chunk: string) => (read += chunk));
      req.on('end', () => res.end('done'));
    });
    try {
      await exchange(
        port,
        'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nfirst\r\n7\r\nrefused\r\n4\r\nlast\r\n0\r\n\r\n',
      );
      rely('hands the body to the request through push()', counted === 16, `${counted} bytes seen`);
      rely('drops a chunk push() did not take', read === 'firstlast', read);
      rely("hands the body's end through push(null)", ends === 1, `${ends} ends`);
    } finally {
      server.close();
    }
  });

  it('stops listening without closing an idle kept-alive connection, which still takes its next request', async () => {
    const { server, port } = await serve((req, res) => res.end(req.url));
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    socket.write('GET /first HTTP/1.1\r\nHost: x\r\n\r\n');
    while (!text.includes('/first')) await once(socket, 'data');
    let closed = false;
    closeLeavingIdleConnections(server, () => (closed = true));
    socket.write('GET /second HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await once(socket, 'close');
    rely('closes idle connections only through server.closeIdleConnections()', text.includes('/second'), text);
    // Then it is closed, as server.close() closes.
    if (!closed) await once(server, 'close');
  });
});
