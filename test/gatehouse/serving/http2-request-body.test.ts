/**
 * The body of an HTTP/2 request, read by the app as an HTTP/1.1 one: a
 * body that ended (empty, in a DATA frame of its own) before anyone read
 * it still ends for its reader, who reads it whole and empty.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { listen } from '../../../src/gatehouse';
import type { Http2Request } from '../../../src/gatehouse/serving/http2';
import { h2Connect } from '../../support/http2-client';

/** Resolves once `fn` is true, looking each turn of the event loop. */
async function until(fn: () => boolean): Promise<void> {
  while (!fn()) await new Promise((resolve) => setImmediate(resolve));
}

describe('gatehouse/serving: the body of an HTTP/2 request', () => {
  it('ends for a reader that comes after its empty end did', async () => {
    const read = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
      // Read only once the stream under it has ended, as a request admitted after some wait is.
      await until(() => (req as unknown as Http2Request).stream.readableEnded);
      let bytes = 0;
      for await (const chunk of req) bytes += (chunk as Buffer).length;
      res.end(`read ${bytes} bytes, complete: ${req.complete}`);
    };
    const handler: http.RequestListener = (req, res) => void read(req, res);
    const server = await listen(handler, { host: '127.0.0.1', port: 0 });
    const session = await h2Connect(`http://127.0.0.1:${server.port}`);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/' });
      // Its headers without END_STREAM, then an empty DATA frame that ends it.
      stream.end();
      let text = '';
      stream.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      await new Promise((resolve) => stream.once('end', resolve));
      assert.equal(text, 'read 0 bytes, complete: true');
    } finally {
      session.destroy();
      await server.close(0);
    }
  });
});
