import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { createDiagModule, type DiagSnapshot } from '../../src/diag';
import {
  collectConsoleErrors,
  requireChromium,
  launchBrowser,
  serveLocally,
  type LocalServer,
  type TestBrowser,
} from '../support/browser';
import { CONFIG_ERRORS, sampleSnapshot } from '../support/diag-sample';
import { routedUnder } from '../support/gateway-stand-in';

describe('diag page in a browser', function () {
  let browser: TestBrowser;
  let server: LocalServer;
  let snapshot: DiagSnapshot;
  let page: Page;
  let consoleErrors: string[];

  before(async function () {
    requireChromium(this);
    const diag = createDiagModule({ snapshot: () => snapshot });
    server = await serveLocally(routedUnder('/gateway/v0/diag', diag.app!).callback());
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  beforeEach(async () => {
    snapshot = sampleSnapshot();
    page = await browser.newPage();
    consoleErrors = collectConsoleErrors(page);
  });

  afterEach(async () => {
    await page?.close();
  });

  it('loads without console errors and shows the routes in match order', async () => {
    const res = await page.goto(`${server.origin}/gateway/v0/diag/`);
    assert.equal(res?.status(), 200);
    assert.equal(await page.title(), 'Gatehouse diagnostics');
    const prefixes = await page.locator('table tbody tr td:nth-child(3)').allTextContents();
    assert.deepEqual(prefixes, ['/v1/hotels/', '/legacy/', '/gateway/v0/diag', '/x/"&<b>']);
    assert.ok(await page.getByText('/v1/hotels/', { exact: true }).isVisible());
    assert.deepEqual(consoleErrors, []);
  });

  it('applies its own stylesheet under its Content-Security-Policy', async () => {
    await page.goto(`${server.origin}/gateway/v0/diag/`);
    type Styles = { getComputedStyle(el: unknown): { borderCollapse: string } };
    const collapse = await page
      .locator('table')
      .evaluate((el) => (globalThis as unknown as Styles).getComputedStyle(el).borderCollapse);
    assert.equal(collapse, 'collapse');
    assert.deepEqual(consoleErrors, []);
  });

  it('shows a route name from the config as text, never as markup', async () => {
    await page.goto(`${server.origin}/gateway/v0/diag/`);
    assert.ok(await page.getByText('<script>alert(1)</script>', { exact: true }).isVisible());
    assert.equal(await page.locator('script').count(), 0);
    assert.deepEqual(consoleErrors, []);
  });

  it('shows the errors of a rejected reload', async () => {
    snapshot = sampleSnapshot(CONFIG_ERRORS);
    await page.goto(`${server.origin}/gateway/v0/diag/`);
    const alert = page.getByRole('alert');
    assert.ok(await alert.isVisible());
    const text = await alert.textContent();
    assert.match(String(text), /The last reload was rejected/);
    assert.match(String(text), /service <evil>, Mapping 'x': timeout_ms: expected number/);
    assert.deepEqual(consoleErrors, []);
  });

  it('follows the slashless path to the page, and the JSON link to the JSON form', async () => {
    await page.goto(`${server.origin}/gateway/v0/diag`);
    assert.equal(page.url(), `${server.origin}/gateway/v0/diag/`);
    assert.deepEqual(consoleErrors, []);
    await page.getByRole('link', { name: 'JSON' }).click();
    await page.waitForURL(`${server.origin}/gateway/v0/diag/?json=true`);
    const body = JSON.parse(String(await page.locator('body').textContent()));
    assert.equal(body.version, '1.2.3');
  });
});
