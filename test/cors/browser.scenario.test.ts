import assert from 'node:assert/strict';
import Koa from 'koa';
import { corsMiddleware } from '../../src/cors';
import { errorHandler } from '../../src/http';
import {
  collectConsoleErrors,
  requireChromium,
  launchBrowser,
  serveLocally,
  type LocalServer,
  type TestBrowser,
} from '../support/browser';

/** A page whose script sends a PUT with a JSON body and a custom header: a request that needs a preflight. */
const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>CORS check</title><link rel="icon" href="data:,"></head>
<body><p id="state">running</p>
<script>
(async () => {
  const target = new URLSearchParams(location.search).get('target');
  try {
    const response = await fetch(target, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', 'X-Custom': '1' },
      body: JSON.stringify({ hello: 'world' }),
    });
    window.result = {
      ok: true,
      status: response.status,
      rateLimit: response.headers.get('RateLimit'),
      location: response.headers.get('Location'),
      hidden: response.headers.get('X-Hidden'),
      body: await response.json(),
    };
  } catch (error) {
    window.result = { ok: false, error: String(error) };
  }
  document.getElementById('state').textContent = 'done';
})();
</script></body></html>`;

interface FetchResult {
  ok: boolean;
  status?: number;
  rateLimit?: string | null;
  location?: string | null;
  hidden?: string | null;
  body?: unknown;
  error?: string;
}

function pageApp(): Koa {
  const app = new Koa();
  app.use((ctx) => {
    ctx.type = 'text/html';
    ctx.body = PAGE;
  });
  return app;
}

describe('cors in a browser', function () {
  let browser: TestBrowser;
  let allowedPages: LocalServer;
  let otherPages: LocalServer;
  let api: LocalServer;
  const received: string[] = [];

  before(async function () {
    requireChromium(this);
    allowedPages = await serveLocally(pageApp().callback());
    otherPages = await serveLocally(pageApp().callback());

    const app = new Koa();
    app.silent = true;
    app.use(errorHandler());
    app.use(async (ctx, next) => {
      received.push(`${ctx.method} ${ctx.get('Origin')}`);
      await next();
    });
    app.use(corsMiddleware({ origins: [allowedPages.origin], credentials: false, methods: 'GET, PUT' }));
    app.use((ctx) => {
      ctx.set('RateLimit', 'limit=10, remaining=9, reset=60');
      ctx.set('Location', '/x/1');
      ctx.set('X-Hidden', 'not exposed');
      ctx.status = 201;
      ctx.body = { created: true };
    });
    api = await serveLocally(app.callback());
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await Promise.all([allowedPages, otherPages, api].map((s) => s?.close()));
  });

  beforeEach(() => {
    received.length = 0;
  });

  async function runFrom(pages: LocalServer): Promise<{ result: FetchResult; errors: string[] }> {
    const page = await browser.newPage();
    const errors = collectConsoleErrors(page);
    await page.goto(`${pages.origin}/?target=${encodeURIComponent(`${api.origin}/x`)}`);
    await page.waitForFunction(() => (globalThis as unknown as { result?: unknown }).result !== undefined);
    const result = await page.evaluate(() => (globalThis as unknown as { result: FetchResult }).result);
    await page.close();
    return { result, errors };
  }

  it('lets a page of an allowed origin send a preflighted request and read the exposed headers', async () => {
    const { result, errors } = await runFrom(allowedPages);
    assert.deepEqual(errors, []);
    assert.equal(result.ok, true, result.error);
    assert.equal(result.status, 201);
    assert.deepEqual(result.body, { created: true });
    assert.equal(result.rateLimit, 'limit=10, remaining=9, reset=60');
    assert.equal(result.location, '/x/1');
    assert.equal(result.hidden, null, 'a header that is not exposed stays hidden from the page');
    assert.deepEqual(received, [`OPTIONS ${allowedPages.origin}`, `PUT ${allowedPages.origin}`]);
  });

  it('stops the request of a page of another origin at the preflight', async () => {
    const { result } = await runFrom(otherPages);
    assert.equal(result.ok, false);
    assert.match(String(result.error), /TypeError/);
    assert.deepEqual(received, [`OPTIONS ${otherPages.origin}`]);
  });
});
