/**
 * @module test/gatehouse/serving/kept-answers
 * What an open keep-alive connection keeps of the requests it has answered:
 * nothing, once the answer is sent, so that they are collected young.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { listen, type RunningServer } from '../../../src/gatehouse';
import { collector } from '../../support/collector';

/** GET `path` on `agent`'s kept-alive connection; the answer's body. */
function get(port: number, agent: http.Agent, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

describe('gatehouse/serving: what a kept-alive connection keeps', () => {
  let server: RunningServer;
  const answers = new Map<string, WeakRef<http.ServerResponse>>();
  const ports = new Map<string, number | undefined>();

  before(async () => {
    server = await listen(
      (req, res) => {
        answers.set(req.url!, new WeakRef(res));
        ports.set(req.url!, req.socket.remotePort);
        res.end(req.url);
      },
      { host: '127.0.0.1', port: 0 },
    );
  });

  after(() => server.close(0));

  it('lets an answer sent on a connection that stays open be collected before the next request comes', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.equal(await get(server.port, agent, '/first'), '/first');
      const gc = collector();
      for (let i = 0; i < 3 && answers.get('/first')!.deref() !== undefined; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        gc();
      }
      assert.equal(answers.get('/first')!.deref(), undefined, 'the first answer is still held after it was sent');
      // The connection stayed open all along: the next request comes on it, and is served.
      assert.equal(await get(server.port, agent, '/second'), '/second');
      assert.equal(ports.get('/second'), ports.get('/first'));
    } finally {
      agent.destroy();
    }
  });
});
