import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import request from 'supertest';
import { collectConsoleErrors, requireChromium, launchBrowser, type TestBrowser } from '../support/browser';
import { ALICE } from '../support/credentials';
import { DEMO_CONFIG } from '../support/config-folder';
import { startGatehouse, type Running } from '../support/gatehouse';
import { readPng } from '../support/png';

type Styles = { getComputedStyle(el: unknown): { lineHeight: string } };

describe('gatehouse diag page in a browser, through the whole gateway', function () {
  let running: Running;
  let withCredentials: TestBrowser;
  let withoutCredentials: TestBrowser;

  before(async function () {
    requireChromium(this);
    running = await startGatehouse({ configDir: DEMO_CONFIG });
    withCredentials = await launchBrowser({ httpCredentials: { username: 'alice', password: 'wonderland' } });
    withoutCredentials = await launchBrowser();
  });

  after(async () => {
    await withCredentials?.close();
    await withoutCredentials?.close();
    await running?.stop();
  });

  async function visit(browser: TestBrowser, path: string): Promise<{ page: Page; status?: number; errors: string[] }> {
    const page = await browser.newPage();
    const errors = collectConsoleErrors(page);
    const response = await page.goto(`${running.url}${path}`);
    return { page, status: response?.status(), errors };
  }

  it('shows the page to alice, with the routes in match order and no console error', async () => {
    const { page, status, errors } = await visit(withCredentials, '/gateway/v0/diag/');
    try {
      assert.equal(status, 200);
      assert.equal(await page.title(), 'Gatehouse diagnostics');
      const names = await page.locator('#routes ~ div table tbody tr td:nth-child(2)').allTextContents();
      // The route table's order: precedence, then the longest prefix (the diag page's own comes first).
      assert.deepEqual(
        names,
        running.gatehouse.gateway.snapshot().routes.map((r) => r.name),
      );
      assert.equal(names[0], 'diag-mapping');
      assert.ok(names.indexOf('hotels-mapping') < names.indexOf('api-v1'), '/v1/hotels before /v1/');
      assert.ok(await page.getByText('No configuration errors.').isVisible());
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  });

  it('fits the demo on a 1280-pixel screen: every column of the routes within it, a label a line', async () => {
    const page = await withCredentials.newPage();
    try {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(`${running.url}/gateway/v0/diag/`);
      const edges = await page
        .locator('table.routes th, table.routes td')
        .evaluateAll((cells) => cells.map((c) => [c.textContent, c.getBoundingClientRect().right]));
      assert.ok(edges.some(([text]) => text === '5xx'));
      for (const [text, right] of edges) assert.ok(Number(right) <= 1280, `"${text}" ends at ${right}`);
      // cars-mapping's one label, user ← x-travel-user, on one line.
      const cars = page.locator('table.routes tbody tr', { hasText: 'cars-mapping' }).locator('td.labels li');
      const [height, lineHeight] = await cars.evaluate((li) => [
        li.getBoundingClientRect().height,
        parseFloat((globalThis as unknown as Styles).getComputedStyle(li).lineHeight),
      ]);
      assert.ok(height <= lineHeight * 1.3, `the label is ${height} pixels high, a line ${lineHeight}`);
      const shot = readPng(await page.screenshot({ fullPage: true }));
      assert.equal(shot.width, 1280);
    } finally {
      await page.close();
    }
  });

  it('sends the slashless path to the page', async () => {
    const { page, status, errors } = await visit(withCredentials, '/gateway/v0/diag');
    try {
      assert.equal(status, 200);
      assert.equal(page.url(), `${running.url}/gateway/v0/diag/`);
      assert.equal(await page.title(), 'Gatehouse diagnostics');
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  });

  it('challenges a browser without credentials with 401 and Basic', async () => {
    const page = await withoutCredentials.newPage();
    try {
      const answered = page.waitForResponse(`${running.url}/gateway/v0/diag/`);
      // Playwright cancels the login prompt a user would see, and the navigation ends there.
      await assert.rejects(page.goto(`${running.url}/gateway/v0/diag/`), /ERR_INVALID_AUTH_CREDENTIALS/);
      const response = await answered;
      assert.equal(response.status(), 401);
      assert.equal(response.headers()['www-authenticate'], 'Basic realm="gatehouse"');
      const api = await withoutCredentials.context.request.get(`${running.url}/gateway/v0/diag/`);
      assert.equal(api.status(), 401);
      assert.equal((await api.json()).code, 401);
    } finally {
      await page.close();
    }
  });

  it('redirects the slashless path with 301, behind auth like the page', async () => {
    await request(running.url).get('/gateway/v0/diag').expect(401);
    const res = await request(running.url).get('/gateway/v0/diag?json=true').set('Authorization', ALICE).expect(301);
    assert.equal(res.headers.location, '/gateway/v0/diag/?json=true');
    await request(running.url).get('/gateway/v0/diagnostics').set('Authorization', ALICE).expect(404);
  });
});
