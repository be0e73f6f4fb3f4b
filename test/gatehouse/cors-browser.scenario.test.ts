import assert from 'node:assert/strict';
import Koa from 'koa';
import { requireChromium, launchBrowser, serveLocally, type LocalServer, type TestBrowser } from '../support/browser';
import { copyConfig, type TempConfig } from '../support/config-folder';
import { startGatehouse, type Running } from '../support/gatehouse';

/**
 * A page that calls the gateway of another origin with Basic credentials in
 * an Authorization header (which only a preflight can allow), and then with
 * a wrong password. Its fetch leaves `credentials` at its default: with
 * `include`, Chromium answers the 401's Basic challenge with a login prompt
 * instead of handing the response to the page.
 */
const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bookings</title><link rel="icon" href="data:,"></head>
<body><script>
(async () => {
  const gateway = new URLSearchParams(location.search).get('gateway');
  const call = async (password) => {
    try {
      const response = await fetch(gateway + '/v1/hotels', {
        headers: { Authorization: 'Basic ' + btoa('alice:' + password), Accept: 'application/json' },
      });
      return {
        ok: true,
        status: response.status,
        rateLimit: response.headers.get('RateLimit'),
        rateLimitPolicy: response.headers.get('RateLimit-Policy'),
        requestId: response.headers.get('X-Request-Id'),
        body: await response.json(),
      };
    } catch (error) {
      return { ok: false, error: String(error) };
    }
  };
  window.results = { good: await call('wonderland'), bad: await call('not-her-password') };
})();
</script></body></html>`;

interface CallResult {
  ok: boolean;
  status?: number;
  rateLimit?: string | null;
  rateLimitPolicy?: string | null;
  requestId?: string | null;
  body?: { code?: number; message?: string; items?: unknown[] };
  error?: string;
}

describe('gatehouse CORS in a browser', function () {
  let browser: TestBrowser;
  let pages: LocalServer;
  let config: TempConfig;
  let running: Running;

  before(async function () {
    requireChromium(this);
    const app = new Koa();
    app.use((ctx) => {
      ctx.type = 'text/html';
      ctx.body = PAGE;
    });
    pages = await serveLocally(app.callback());
    config = copyConfig();
    config.write(
      'cors.yaml',
      `apiVersion: gateway/v1\nkind: Module\nname: gateway\nconfig:\n  cors:\n    origins: ${pages.origin}\n`,
    );
    running = await startGatehouse({ configDir: config.dir });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await pages?.close();
    await running?.stop();
    config?.remove();
  });

  async function resultsFor(origin: string): Promise<{ good: CallResult; bad: CallResult }> {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/?gateway=${encodeURIComponent(running.url)}`);
      await page.waitForFunction(() => (globalThis as unknown as { results?: unknown }).results !== undefined);
      return await page.evaluate(
        () => (globalThis as unknown as { results: { good: CallResult; bad: CallResult } }).results,
      );
    } finally {
      await page.close();
    }
  }

  it('lets a page of an allowed origin call it with credentials and read the rate-limit headers and a 401', async () => {
    const { good, bad } = await resultsFor(pages.origin);
    assert.equal(good.ok, true, good.error);
    assert.equal(good.status, 200);
    assert.ok(Array.isArray(good.body?.items));
    assert.match(String(good.rateLimit), /^"per-user";r=\d+;t=\d+$/);
    assert.equal(good.rateLimitPolicy, '"per-user";q=60;w=60');
    assert.equal(good.requestId, null, 'a header that is not exposed stays hidden from the page');
    assert.equal(bad.ok, true, bad.error);
    assert.equal(bad.status, 401);
    assert.equal(bad.body?.code, 401);
    assert.equal(bad.body?.message, '401: Unauthorized');
    // The preflights reached the gateway without credentials, and were answered there; their
    // lines come before those of the two calls, which are written once the page has its answers.
    await running.log.waitForLines(2, (l) => l.msg === 'request' && l.method === 'GET');
    const preflights = running.log.lines.filter((l) => l.msg === 'request' && l.method === 'OPTIONS');
    assert.ok(preflights.length >= 1);
    for (const line of preflights)
      assert.deepEqual([line.route, line.status, line.user], ['hotels-mapping', 204, undefined]);
  });

  it('keeps a page of another origin from reading anything', async () => {
    const other = await serveLocally(
      new Koa()
        .use((ctx) => {
          ctx.type = 'text/html';
          ctx.body = PAGE;
        })
        .callback(),
    );
    try {
      const before = running.log.lines.filter((l) => l.msg === 'request').length;
      const { good, bad } = await resultsFor(other.origin);
      for (const result of [good, bad]) {
        assert.equal(result.ok, false);
        assert.match(String(result.error), /TypeError/);
      }
      // Stopped at the preflight: the gateway refused it, and nothing else was asked.
      const seen = (await running.log.requests(before + 1))
        .slice(before)
        .map((l) => `${String(l.method)} ${String(l.status)}`);
      assert.ok(seen.length >= 1);
      for (const line of seen) assert.equal(line, 'OPTIONS 403');
    } finally {
      await other.close();
    }
  });
});
