/**
 * What the diag page says of a running gateway besides its routes: how each
 * dependency is, the traffic of the last minutes, every file of its config
 * folder; on the page and in its JSON.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { createDiagModule, type DiagSnapshot } from '../../src/diag';
import { sampleExtras, sampleSnapshot } from '../support/diag-sample';
import { routedUnder } from '../support/gateway-stand-in';

describe('diag/app: status, traffic and files', () => {
  let snapshot: DiagSnapshot;
  const diag = createDiagModule({ snapshot: () => snapshot });
  const server = routedUnder('/gateway/v0/diag', diag.app!).callback();

  beforeEach(() => {
    snapshot = sampleSnapshot([], sampleExtras());
  });

  it('shows each dependency first, with its state and what it is', async () => {
    const { text } = await request(server).get('/gateway/v0/diag/').expect(200);
    assert.ok(text.indexOf('id="status"') < text.indexOf('id="routes"'));
    assert.ok(text.indexOf('id="routes"') < text.indexOf('id="config"'));
    assert.match(
      text,
      /<tr><th scope="row">Database<\/th><td><span class="state down">down<\/span><\/td><td>PostgreSQL at postgres:\/\/gatehouse@db\/gatehouse: connection refused<\/td><\/tr>/,
    );
    assert.match(
      text,
      /<th scope="row">cluster_legacy_internal_8080<\/th><td><span class="state warn">look<\/span><\/td><td>upstream cluster: 1 of 3 endpoints ejected/,
    );
  });

  it('counts the limits and the users at the top', async () => {
    snapshot.config.counts = { ...snapshot.config.counts!, limits: { files: 1, domains: 1, rules: 7 } };
    const { text } = await request(server).get('/gateway/v0/diag/').expect(200);
    assert.match(text, /<div>7<span>limits<\/span><\/div>\n<div>2<span>users<\/span><\/div>/);
    assert.match(text, /<div>4<span>routes<\/span><\/div>/);
  });

  it('draws a row of bars a minute for all routes and for each busy one, the health probes left out', async () => {
    const { text } = await request(server).get('/gateway/v0/diag/').expect(200);
    const start = text.indexOf('<table class="traffic">');
    const chart = text.slice(start, text.indexOf('</table>', start));
    const rows = [...chart.matchAll(/<tr><th scope="row">(.*?)<\/th>.*?<td class="num">(\d+)<\/td>/g)];
    assert.deepEqual(
      rows.map((r) => [r[1], Number(r[2])]),
      [
        ['<span class="none">all routes</span>', 15 * 20 + 3 * 105 + 15 * 6 + 15],
        ['hotels', 15 * 20 + 3 * 105],
        ['legacy', 90],
        ['unmatched', 15],
      ],
    );
    assert.equal((chart.match(/<svg /g) ?? []).length, 4);
    assert.match(chart, /<rect class="c5xx" [^>]*><title>03:00 UTC: 6 requests, 0 4xx, 6 5xx<\/title>/);
    assert.doesNotMatch(text, /gateway-health/);
    // So that the chart's "all routes" and the count since the start, which has the probes, do not seem to disagree.
    assert.match(
      text,
      /<p class="legend">[^<]*(<span[^>]*><\/span>[^<]*)+ · health probes and metrics scrapes left out<\/p>/,
    );
    assert.doesNotMatch(text, /<script|<img|https?:\/\/(?!localhost)/, 'drawn by the page itself');
  });

  it('lists every file of the folder, what it was read as and what it holds, with what the folder holds in all', async () => {
    const { text } = await request(server).get('/gateway/v0/diag/').expect(200);
    assert.match(
      text,
      /<tr><td><code>limits\.yaml<\/code><\/td><td>records<\/td><td>no record; ignored: document 1 \(domain gateway\)<\/td><\/tr>/,
    );
    assert.match(text, /<tr><td><code>README\.txt<\/code><\/td><td class="none">ignored<\/td><td>not read: /);
    assert.match(
      text,
      /<dt>Holds<\/dt><dd>4 Mappings, 1 AuthService, 1 RateLimitService, 2 users, no limits \(no ratelimit\.yaml, no ratelimit\/\), no bookings catalogue, 1 entry ignored<\/dd>/,
    );
  });

  it('escapes what a dependency or a file name says', async () => {
    snapshot.dependencies = [{ name: '<b>Redis</b>', state: 'down', detail: 'redis://"x": <i>refused</i>' }];
    snapshot.config.files = [{ name: '<evil>.yaml', readAs: 'records', detail: '<script>' }];
    const { text } = await request(server).get('/gateway/v0/diag/').expect(200);
    assert.ok(text.includes('&lt;b&gt;Redis&lt;/b&gt;'));
    assert.ok(text.includes('redis://&quot;x&quot;: &lt;i&gt;refused&lt;/i&gt;'));
    assert.ok(text.includes('<code>&lt;evil&gt;.yaml</code>'));
    assert.ok(!text.includes('<script>') && !text.includes('<i>'));
  });

  it('gives the same in its JSON', async () => {
    const { body } = await request(server).get('/gateway/v0/diag/?json=true').expect(200);
    assert.equal(body.dependencies.length, 5);
    assert.deepEqual(body.dependencies[1], {
      name: 'Database',
      state: 'down',
      detail: 'PostgreSQL at postgres://gatehouse@db/gatehouse: connection refused',
    });
    assert.equal(body.traffic.minutes, 15);
    assert.equal(body.traffic.since, '2025-01-02T02:50:00.000Z');
    assert.deepEqual(
      body.traffic.routes.map((r: { name: string }) => r.name),
      ['hotels', 'legacy', 'unmatched'],
    );
    assert.deepEqual(body.traffic.routes[1].errors, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 6, 6, 0, 0]);
    assert.equal(body.config.files.length, 4);
    assert.deepEqual(body.config.counts.limits, { files: 0, domains: 0, rules: 0 });
  });
});
