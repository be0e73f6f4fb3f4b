import assert from 'node:assert/strict';
import http from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import request from 'supertest';
import {
  countedSnapshotSteps,
  createDiagModule,
  describeServedSteps,
  renderDiagPage,
  type DiagRoute,
  type DiagSnapshot,
} from '../../src/diag';
import { runAtOnce } from '../../src/gateway/slices';
import { mappingSchema } from '../../src/gateway/config/schema';
import { xmlFormatter } from '../../src/http';
import { close, listen } from '../support/server';
import { BUILT_IN, sampleConfig, sampleSnapshot } from '../support/diag-sample';
import { routedUnder } from '../support/gateway-stand-in';

/** The sample snapshot with its routes repeated up to `count`, each named apart: a page of a few MB. */
function manyRoutes(count: number): DiagSnapshot {
  const sample = sampleSnapshot();
  const routes = Array.from({ length: count }, (_, i) => ({
    ...sample.routes[i % sample.routes.length],
    name: `route-${i}`,
  }));
  return { ...sample, routes };
}

/** A module serving whatever `snapshot` holds at each view. */
function serving(snapshot: () => DiagSnapshot) {
  const diag = createDiagModule({ snapshot });
  return routedUnder('/gateway/v0/diag', diag.app!).callback();
}

describe('diag/render: pages of many routes', function () {
  it('sends the page, its JSON and its XML in chunks, each to the byte what it is when written whole', async () => {
    const snapshot = manyRoutes(3000);
    const server = serving(() => snapshot);
    const forms: [string, string][] = [
      ['text/html', renderDiagPage(snapshot)],
      ['application/json', JSON.stringify(snapshot)],
      ['application/xml', xmlFormatter.format(snapshot)],
    ];
    for (const [accept, whole] of forms) {
      const res = await request(server)
        .get('/gateway/v0/diag/')
        .set('Accept', accept)
        .buffer(true)
        .parse((r, done) => {
          let text = '';
          r.setEncoding('utf8');
          r.on('data', (chunk: string) => (text += chunk));
          r.on('end', () => done(null, text));
        });
      assert.equal(res.status, 200);
      assert.equal(res.headers['transfer-encoding'], 'chunked', accept);
      assert.equal(res.headers['content-length'], undefined);
      assert.ok(whole.length > 500_000, `${accept}: ${whole.length} characters`);
      assert.ok(res.body === whole, `${accept}: the body is what is written whole`);
    }
  });

  it('sends a small page whole, with its length', async () => {
    const snapshot = sampleSnapshot();
    const res = await request(serving(() => snapshot))
      .get('/gateway/v0/diag/')
      .expect(200);
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(renderDiagPage(snapshot))));
    assert.equal(res.text, renderDiagPage(snapshot));
  });

  it('shows the counts and the order of each view, though it keeps what each frozen route renders to', async () => {
    const config = sampleConfig();
    // Many Mappings, so that the page is written in slices and its rows kept.
    const mappings = Array.from({ length: 2000 }, (_, i) =>
      mappingSchema.parse({
        apiVersion: 'gateway/v1',
        kind: 'Mapping',
        name: `m${i}`,
        prefix: `/m${i}/`,
        service: 'api',
      }),
    );
    const served = runAtOnce(describeServedSteps({ ...config, mappings }, BUILT_IN));
    assert.ok(served.routes.every((r) => Object.isFrozen(r)));
    let counts = new Map<string, { requests: number; clientErrors: number; errors: number }>();
    let order: readonly DiagRoute[] = served.routes;
    const moment = { version: '1', startedAt: new Date(0), now: new Date(1000), configDir: 'c', loadedAt: new Date(0) };
    const server = serving(() =>
      runAtOnce(countedSnapshotSteps({ ...served, routes: order }, moment, (name) => counts.get(name))),
    );
    const rows = async (accept: string) =>
      (await request(server).get('/gateway/v0/diag/').set('Accept', accept).buffer(true)).text;

    const first = await rows('text/html');
    assert.match(
      first,
      /<tr><td class="num">1<\/td><td class="name">m0<\/td>.*?<td class="num">0<\/td><td class="num">0<\/td><td class="num">0<\/td><\/tr>/,
    );
    counts = new Map([['m0', { requests: 7, clientErrors: 2, errors: 1 }]]);
    order = [...served.routes].reverse();
    const second = await rows('text/html');
    assert.match(second, /<tr><td class="num">1<\/td><td class="name">m1999<\/td>/);
    assert.match(
      second,
      /<tr><td class="num">2000<\/td><td class="name">m0<\/td>.*?<td class="num">7<\/td><td class="num">2<\/td><td class="num bad">1<\/td><\/tr>/,
    );
    const json = JSON.parse(await rows('application/json'));
    assert.deepEqual(json.routes.map((r: DiagRoute) => r.name).slice(-2), ['m1', 'm0']);
    assert.deepEqual([json.routes[1999].requests, json.routes[1999].clientErrors, json.routes[1999].errors], [7, 2, 1]);
    // The route that counted is a copy; the frozen one of the configuration is as it was.
    assert.equal(served.routes[0].requests, 0);
  });

  it('stops writing the page of a client that went away, and goes on answering the others', async () => {
    const count = 60_000;
    const snapshot = manyRoutes(count);
    let furthest = -1;
    // The routes as the JSON is written from them: how far the writing got.
    const watched = new Proxy(snapshot.routes, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) furthest = Math.max(furthest, Number(key));
        return Reflect.get(target, key, receiver);
      },
    });
    const { server, url } = await listen(serving(() => ({ ...snapshot, routes: watched })));
    try {
      await new Promise<void>((resolve, reject) => {
        const req = http.get(`${url}/gateway/v0/diag/?json=true`, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', reject);
      });
      // Its first chunk came; the page is written no further than what the sockets hold once they are full.
      for (let i = 0; i < 50; i++) await nextTurn();
      const reached = furthest;
      for (let i = 0; i < 50; i++) await nextTurn();
      assert.equal(furthest, reached, 'the writing stopped');
      assert.ok(reached < count - 1, `written up to route ${reached} of ${count}`);
      const next = await fetch(`${url}/gateway/v0/diag/`, { headers: { accept: 'application/json' }, method: 'HEAD' });
      assert.equal(next.status, 200);
    } finally {
      await close(server);
    }
  });
});
