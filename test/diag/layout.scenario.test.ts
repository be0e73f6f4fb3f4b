/**
 * The diag page as an operator sees it on a 1280-pixel screen, in a real
 * Chromium: the status of each dependency and the traffic at the top, then
 * the routes, then the configuration; the route table within the page,
 * each label on a line of its own; and the traffic drawn by the page
 * itself, which a screenshot of it shows.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { createDiagModule, type DiagRoute, type DiagSnapshot } from '../../src/diag';
import {
  collectConsoleErrors,
  launchBrowser,
  requireChromium,
  serveLocally,
  type LocalServer,
  type TestBrowser,
} from '../support/browser';
import { readPng } from '../support/png';
import { sampleExtras, sampleSnapshot } from '../support/diag-sample';
import { routedUnder } from '../support/gateway-stand-in';

const WIDTH = 1280;

type Styles = { getComputedStyle(el: unknown): { lineHeight: string } };

/** A box of the page, as the browser laid it out. */
interface Box {
  what: string;
  left: number;
  right: number;
  top: number;
  height: number;
}

/** The sample, with two routes whose names, prefixes and upstreams are as long as real ones get. */
function longSnapshot(): DiagSnapshot {
  const sample = sampleSnapshot([], sampleExtras());
  const legacy = sample.routes[1];
  const long: DiagRoute[] = [
    {
      ...legacy,
      name: 'organisation-projects-api-canary',
      prefix: '/api/v2/organisations/projects/',
      service: 'projects.platform-team.svc.cluster.local:8443',
      upstream: {
        retry_policy: { retry_on: '5xx', num_retries: 3, per_try_timeout: '2s' },
        load_balancer: { policy: 'ring_hash', header: 'x-organisation-id' },
      },
    },
    {
      ...sample.routes[0],
      name: 'hotels-by-region',
      prefix: '/v1/hotels/regions/',
      labels: {
        gateway: [{ request_label_group: [{ user: { header: 'x-travel-user', omit_if_not_present: true } }] }],
      },
    },
  ];
  return { ...sample, routes: [...sample.routes, ...long] };
}

describe('diag page at 1280 pixels, in a browser', function () {
  let browser: TestBrowser;
  let server: LocalServer;
  let page: Page;
  let errors: string[];

  before(async function () {
    requireChromium(this);
    const diag = createDiagModule({ snapshot: longSnapshot });
    server = await serveLocally(routedUnder('/gateway/v0/diag', diag.app!).callback());
    browser = await launchBrowser();
    page = await browser.newPage();
    errors = collectConsoleErrors(page);
    await page.setViewportSize({ width: WIDTH, height: 800 });
    await page.goto(`${server.origin}/gateway/v0/diag/`);
  });

  after(async () => {
    await page?.close();
    await browser?.close();
    await server?.close();
  });

  /** The boxes of the elements `selector` finds. */
  function boxes(selector: string): Promise<Box[]> {
    return page.locator(selector).evaluateAll((elements) =>
      elements.map((el) => {
        const r = el.getBoundingClientRect();
        return {
          what: (el.textContent ?? '').slice(0, 40),
          left: r.left,
          right: r.right,
          top: r.top,
          height: r.height,
        };
      }),
    );
  }

  it('puts the status first, then the routes, then the configuration and the services', async () => {
    const sections = await page.locator('main h2').evaluateAll((hs) => hs.map((h) => h.id));
    assert.deepEqual(sections, ['status', 'routes', 'config', 'auth', 'ratelimit']);
    const counters = await page.locator('header .counters span').allTextContents();
    assert.deepEqual(counters, ['requests', '4xx answers', '5xx answers', 'routes', 'limits', 'users']);
    const states = await page
      .locator('table.dependencies tr')
      .evaluateAll((rows) =>
        rows.map((r) => [r.querySelector('th')?.textContent, r.querySelector('.state')?.textContent]),
      );
    assert.deepEqual(states, [
      ['Redis', 'ok'],
      ['Database', 'down'],
      ['Rate-limit service', 'ok'],
      ['Auth service', 'ok'],
      ['cluster_legacy_internal_8080', 'look'],
    ]);
    assert.deepEqual(errors, []);
  });

  it('lays the page out within 1280 pixels: no column of any table past its container or the screen', async () => {
    const scroll = await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document;
      return doc.documentElement.scrollWidth;
    });
    assert.ok(scroll <= WIDTH, `the page is ${scroll} pixels wide`);
    const [container] = await boxes('#routes + .scroll');
    assert.ok(container.right <= WIDTH, `the route table's container ends at ${container.right}`);
    const cells = await boxes('table.routes th, table.routes td');
    assert.equal(cells.filter((c) => c.what === '5xx').length, 1, 'the 5xx column is there');
    for (const cell of cells)
      assert.ok(cell.right <= container.right + 0.5, `"${cell.what}" ends at ${cell.right}, past ${container.right}`);
    for (const cell of await boxes('table.traffic td, table.traffic th, table.dependencies td, table.files td'))
      assert.ok(cell.right <= WIDTH, `"${cell.what}" ends at ${cell.right}`);
  });

  it('writes each label on a line, never a word piece a line, and a route of one label one line high', async () => {
    const lineHeight = await page
      .locator('table.routes td.labels')
      .first()
      .evaluate((el) => parseFloat((globalThis as unknown as Styles).getComputedStyle(el).lineHeight));
    // A header name is never broken: each is one box.
    const names = await page
      .locator('table.routes td.labels code')
      .evaluateAll((codes) => codes.map((c) => [c.textContent, c.getClientRects().length]));
    assert.ok(names.length > 0);
    for (const [name, rects] of names) assert.equal(rects, 1, `${name} is broken over ${rects} lines`);
    for (const item of await boxes('table.routes td.labels li'))
      assert.ok(item.height <= lineHeight * 2.2, `"${item.what}" is ${item.height} pixels high`);
    // A route of one label (user ← x-travel-user, if present): one line.
    const single = await boxes('table.routes tbody tr:last-child td.labels li');
    assert.equal(single.length, 1);
    assert.ok(single[0].height <= lineHeight * 1.3, `"${single[0].what}" is ${single[0].height} pixels high`);
  });

  it('says a rewrite that keeps the path in a word', async () => {
    const legacy = page.locator('table.routes tbody tr').nth(1);
    assert.equal(await legacy.locator('td').nth(4).textContent(), 'unchanged');
  });

  it('draws the traffic of the last minutes itself, the 5xx burst of a route in red, without the health probes', async () => {
    const rows = await page.locator('table.traffic tbody th').allTextContents();
    assert.deepEqual(rows, ['all routes', 'hotels', 'legacy', 'unmatched']);
    const bars = page.locator('table.traffic tbody tr').nth(2).locator('svg.bars');
    assert.equal(await bars.locator('rect.c5xx').count(), 3, 'three minutes of 5xx');
    const shot = readPng(await bars.screenshot());
    let red = 0;
    for (let x = 0; x < shot.width; x++)
      for (let y = 0; y < shot.height; y++) {
        const [r, g, b] = shot.pixel(x, y);
        if (r > 150 && g < 90 && b < 90) red++;
      }
    assert.ok(red > 20, `${red} red pixels in the legacy route's bars`);
    assert.deepEqual(errors, []);
  });

  it('takes a screenshot of the whole page as wide as the screen, the routes within it', async () => {
    const shot = readPng(await page.screenshot({ fullPage: true }));
    assert.equal(shot.width, WIDTH);
    const [table] = await boxes('table.routes');
    const scrollY = await page.evaluate(() => (globalThis as unknown as { scrollY: number }).scrollY);
    assert.ok(shot.height >= table.top + scrollY + table.height, `${shot.height} pixels high`);
    // The right edge of the routes table is drawn inside the picture: its border is darker than the page.
    const y = Math.round(table.top + scrollY + table.height / 2);
    const x = Math.round(table.right) - 1;
    const [r, g, b] = shot.pixel(x, y);
    assert.ok(r < 245 || g < 245 || b < 245, `the table's right border at (${x}, ${y}) is drawn: ${r},${g},${b}`);
  });
});
