import assert from 'node:assert/strict';
import { longestStall, manyMappings, type Stall } from '../support/large-config';
import { ALICE } from '../support/credentials';
import { copyConfig, type TempConfig } from '../support/config-folder';
import { startGatehouse, type Running } from '../support/gatehouse';

const MAPPINGS = 30_000;
/** The demo's own Mappings, beside the many. */
const DEMO_MAPPINGS = 5;
/**
 * At most this share of the views' time may pass in the longest stall: a
 * page written in one go holds the event loop for nearly all of it, one
 * written in slices for a small part, however fast or busy the machine is.
 */
const MAX_STALL_SHARE = 0.1;

/**
 * The body of `res`, decoded as it comes: read whole at the end (as
 * `text()` does), 13 MB would hold the test's own event loop, the
 * gatehouse's, for a tenth of a second. Joined once the stall is measured.
 */
async function bodyParts(res: Response): Promise<string[]> {
  const decoder = new TextDecoder();
  const parts: string[] = [];
  for await (const chunk of res.body!) parts.push(decoder.decode(chunk, { stream: true }));
  parts.push(decoder.decode());
  return parts;
}

/** The names in the second cell of each row of the page's routes table, in order. */
function rowNames(html: string): string[] {
  const table = html.indexOf('<table class="routes">');
  const body = html.slice(html.indexOf('<tbody>', table), html.indexOf('</tbody>', table));
  return [...body.matchAll(/<tr><td class="num">\d+<\/td><td class="name">([^<]*)<\/td>/g)].map((m) => m[1]);
}

describe('gatehouse diag page of a large config', function () {
  this.timeout(300_000);
  let config: TempConfig;
  let running: Running;

  before(async () => {
    config = copyConfig();
    config.write('many.yaml', manyMappings(MAPPINGS));
    running = await startGatehouse({ configDir: config.dir });
  });

  after(async () => {
    await running?.stop();
    config?.remove();
  });

  async function view(path: string, accept: string): Promise<Response> {
    return fetch(`${running.url}${path}`, { headers: { authorization: ALICE, accept } });
  }

  /**
   * As the reload's (folder/reload-stall.test.ts), the stall is measured
   * against the views themselves, not against a number of milliseconds.
   * The first views of a configuration describe it (its routes in match
   * order, their shares and settings) and write it; on an idle machine the
   * longest stall is a few tens of milliseconds.
   */
  it(`answers the JSON and the page of ${MAPPINGS} Mappings in match order, check_alive answered all along and the event loop held for a small share of the views at the most`, async () => {
    // A route that counted requests: its row is written for each view, the others' are kept.
    for (let i = 0; i < 3; i++) assert.equal((await fetch(`${running.url}/p6/messages/1`)).status, 200);
    let json: string[] = [];
    let html: string[] = [];
    const views: Stall = await longestStall(running.url, async () => {
      const asJson = await view('/gateway/v0/diag/?json=true', '*/*');
      assert.equal(asJson.status, 200);
      assert.equal(asJson.headers.get('content-type'), 'application/json; charset=utf-8');
      json = await bodyParts(asJson);
      const asPage = await view('/gateway/v0/diag/', 'text/html');
      assert.equal(asPage.status, 200);
      assert.equal(asPage.headers.get('content-type'), 'text/html; charset=utf-8');
      html = await bodyParts(asPage);
    });
    const figures = `views of ${Math.round(views.tookMs)} ms, longest stall ${Math.round(views.stallMs)} ms, ${views.answers} answers of check_alive (the longest ${Math.round(views.longestAnswerMs)} ms)`;
    console.log(figures);
    assert.ok(views.answers >= 1 / MAX_STALL_SHARE, figures);
    assert.ok(views.stallMs <= views.tookMs * MAX_STALL_SHARE, figures);

    const inMatchOrder = running.gatehouse.gateway.snapshot().routes.map((r) => r.name);
    assert.equal(inMatchOrder.length, MAPPINGS + DEMO_MAPPINGS);
    const snapshot = JSON.parse(json.join(''));
    assert.deepEqual(
      snapshot.routes.map((r: { name: string }) => r.name),
      inMatchOrder,
    );
    const counted = snapshot.routes.find((r: { name: string }) => r.name === 'm6');
    assert.deepEqual([counted.requests, counted.clientErrors, counted.errors, counted.rewrite], [3, 0, 0, '/v1/']);
    const canary = snapshot.routes.find((r: { name: string }) => r.name === 'm2');
    assert.deepEqual([canary.weight, canary.share], [10, 10]);
    assert.deepEqual(snapshot.config.errors, []);

    const page = html.join('');
    assert.ok(page.startsWith('<!DOCTYPE html>') && page.endsWith('</html>\n'));
    assert.deepEqual(rowNames(page), inMatchOrder);
    assert.match(
      page,
      /<td class="name">m6<\/td>.*?<td class="num">3<\/td><td class="num">0<\/td><td class="num">0<\/td><\/tr>/,
    );
  });

  it('writes a view from the configuration it began with, whole, when a reload switches to another while the page is sent', async () => {
    const inMatchOrder = running.gatehouse.gateway.snapshot().routes.map((r) => r.name);
    const res = await view('/gateway/v0/diag/', 'text/html');
    assert.equal(res.status, 200);
    // Nothing of the body is read until the reload is done: beyond what the sockets hold, the 13 MB page is written after the switch.
    config.write('many.yaml', manyMappings(300));
    assert.deepEqual(await running.gatehouse.reload(), { ok: true });
    assert.equal(running.gatehouse.gateway.snapshot().routes.length, 300 + DEMO_MAPPINGS);
    const page = (await bodyParts(res)).join('');
    assert.deepEqual(rowNames(page), inMatchOrder);
    // The last reload as it was when the view was asked for: none, as the config served.
    assert.match(page, /<dt>Last reload<\/dt><dd><span class="none">none since start<\/span><\/dd>/);
    const after = await view('/gateway/v0/diag/', 'text/html');
    const now = (await bodyParts(after)).join('');
    assert.equal(rowNames(now).length, 300 + DEMO_MAPPINGS);
    assert.doesNotMatch(now, /none since start/);
  });
});
