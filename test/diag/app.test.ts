import assert from 'node:assert/strict';
import Koa from 'koa';
import request from 'supertest';
import { createDiagModule, type DiagSnapshot } from '../../src/diag';
import { CONFIG_ERRORS, sampleSnapshot } from '../support/diag-sample';
import { routedUnder } from '../support/gateway-stand-in';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const VOID_ELEMENTS = new Set(['meta', 'link', 'br', 'hr', 'img', 'input', 'col']);

/** The open and close tags of a document balance, void elements aside: what a renderer bug would break first. */
function assertBalanced(html: string): void {
  const stack: string[] = [];
  for (const [, closing, name] of html.matchAll(/<(\/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>/g)) {
    const tag = name.toLowerCase();
    if (VOID_ELEMENTS.has(tag)) continue;
    if (!closing) stack.push(tag);
    else assert.equal(stack.pop(), tag, `</${tag}> closes <${stack.at(-1) ?? 'nothing'}>`);
  }
  assert.deepEqual(stack, [], 'every element is closed');
}

describe('diag/app', () => {
  let snapshot: DiagSnapshot = sampleSnapshot();
  let views = 0;
  const diag = createDiagModule({
    snapshot: () => {
      views++;
      return snapshot;
    },
  });
  const server = routedUnder('/gateway/v0/diag', diag.app!).callback();
  const page = (path = '/gateway/v0/diag/') => request(server).get(path);

  beforeEach(() => {
    snapshot = sampleSnapshot();
  });

  it("is the module named 'diag' with an app", () => {
    assert.equal(diag.name, 'diag');
    assert.ok(diag.app instanceof Koa);
  });

  describe('the HTML page', () => {
    it('is what a client without Accept and a browser get', async () => {
      for (const accept of [undefined, '*/*', BROWSER_ACCEPT]) {
        const req = page();
        if (accept) req.set('Accept', accept);
        const res = await req.expect(200);
        assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
        assert.match(String(res.headers.vary), /Accept/);
      }
    });

    it('is a whole HTML5 document with its title, version and uptime', async () => {
      const res = await page().expect(200);
      assert.ok(res.text.startsWith('<!DOCTYPE html>\n<html lang="en">'));
      assert.match(res.text, /<meta charset="utf-8">/);
      assert.match(res.text, /<title>Gatehouse diagnostics<\/title>/);
      assert.match(res.text, /Version 1\.2\.3/);
      assert.match(res.text, /up 1d 3h 4m 5s/);
      assertBalanced(res.text);
    });

    it('loads nothing from elsewhere and runs no script', async () => {
      const res = await page().expect(200);
      assert.doesNotMatch(res.text, /<script|src=|https?:\/\//);
      assert.match(String(res.headers['content-security-policy']), /default-src 'none'; style-src 'sha256-/);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
    });

    it('lists the routes in match order with their settings and counts', async () => {
      const res = await page().expect(200);
      const rows = res.text.split('<tr>').slice(2);
      assert.equal(rows.length, 4);
      assert.match(rows[0], /<td class="name">hotels<\/td><td class="mono">\/v1\/hotels\/<\/td>/);
      assert.match(rows[0], /hotel-booking <span class="none nowrap">in-process<\/span><\/td>/);
      assert.match(
        rows[0],
        /<li title="domain gateway"><span class="label"><code>test_allow<\/code> ← <code>x-gateway-test-allow<\/code> <span class="none nowrap">if present<\/span><\/span><\/li>/,
      );
      assert.match(
        rows[0],
        /<li title="domain gateway"><span class="label"><code>&quot;hotels&quot;<\/code><\/span>, <span class="label"><code>user<\/code> ← <code>x-travel-user<\/code><\/span><\/li>/,
      );
      assert.match(rows[0], /<li><span class="none">precedence 1<\/span><\/li>/);
      assert.match(rows[0], /<td class="num">4<\/td><td class="num">1<\/td><td class="num bad">1<\/td><\/tr>/);
      // The rewrite "" keeps the path: said in a word, not as an empty string.
      assert.match(
        rows[1],
        /<td class="name">legacy<\/td>.*<td><span class="none" title='rewrite: ""'>unchanged<\/span><\/td><td class="service">legacy\.internal:8080 <span class="none nowrap">remote<\/span><\/td>/,
      );
      assert.match(rows[2], /<code>GET<\/code>/);
      // Two routes on one prefix may differ only by the headers they require.
      assert.match(rows[3], /<td class="mono">[^<]*<\/td><td><span class="none">any<\/span><\/td>/);
      assert.match(
        rows[1],
        /<td><ul class="plain"><li><code>x-canary: &lt;yes&gt;<\/code><\/li><li><code>x-debug<\/code> <span class="none">any value<\/span><\/li><\/ul><\/td>/,
      );
      assert.match(rows[3], /bypassed/);
    });

    it('shows the auth and rate-limit services and their failure modes', async () => {
      const res = await page().expect(200);
      assert.match(res.text, /<dt>Record<\/dt><dd>basic-auth<\/dd>/);
      assert.match(res.text, /deny: answered 403 when the auth service fails/);
      assert.match(res.text, /<code>x-travel-user<\/code>/);
      assert.match(res.text, /ratelimit\.internal:8081 \(remote\)/);
      assert.match(res.text, /deny: answered 500 when the rate-limit service fails/);
    });

    it('says so when there is no auth or rate-limit service', async () => {
      snapshot = { ...sampleSnapshot(), auth: undefined, rateLimit: undefined, routes: [] };
      const res = await page().expect(200);
      assert.match(res.text, /No AuthService: requests are not authenticated\./);
      assert.match(res.text, /No RateLimitService/);
      assert.match(res.text, /No mappings/);
      assertBalanced(res.text);
    });

    it('shows the config folder, its files and the totals', async () => {
      const res = await page().expect(200);
      assert.match(res.text, /<code>\/etc\/gatehouse<\/code>/);
      assert.match(res.text, /<li><code>\/etc\/gatehouse\/extra\.yaml<\/code><\/li>/);
      assert.match(res.text, /<div>5<span>requests<\/span><\/div>/);
      assert.match(res.text, /No configuration errors\./);
      assert.doesNotMatch(res.text, /role="alert"/);
    });

    it('highlights the errors of a rejected reload', async () => {
      snapshot = sampleSnapshot(CONFIG_ERRORS);
      const res = await page().expect(200);
      assert.match(res.text, /<div class="config-errors" role="alert">/);
      assert.match(res.text, /The last reload was rejected/);
      assert.match(res.text, /prefix: must start with \//);
      assert.match(res.text, /service &lt;evil&gt;, Mapping &#39;x&#39;/);
      assertBalanced(res.text);
    });

    it('escapes every value that comes from the configuration', async () => {
      const res = await page().expect(200);
      assert.ok(!res.text.includes('<script>alert(1)</script>'));
      assert.ok(!res.text.includes('<b>'));
      assert.ok(res.text.includes('<td class="name">&lt;script&gt;alert(1)&lt;/script&gt;</td>'));
      assert.ok(res.text.includes('/x/&quot;&amp;&lt;b&gt;'));
    });

    it('is built from a fresh snapshot on every view', async () => {
      const before = views;
      await page().expect(200);
      await page().expect(200);
      assert.equal(views, before + 2);
    });

    it('answers HEAD without a body', async () => {
      const res = await request(server).head('/gateway/v0/diag/').expect(200);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(res.text, undefined);
    });
  });

  describe('the JSON form', () => {
    it('is the snapshot, for Accept: application/json', async () => {
      const res = await page().set('Accept', 'application/json').expect(200);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.deepEqual(res.body, JSON.parse(JSON.stringify(snapshot)));
      assert.match(String(res.headers.vary), /Accept/);
    });

    it('is the snapshot for ?json=true, whatever Accept says', async () => {
      const res = await page('/gateway/v0/diag/?json=true').set('Accept', BROWSER_ACCEPT).expect(200);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(res.body.routes[0].prefix, '/v1/hotels/');
      assert.equal(res.headers['content-security-policy'], undefined);
    });

    it('includes the config errors', async () => {
      snapshot = sampleSnapshot(CONFIG_ERRORS);
      const res = await page('/gateway/v0/diag/?json=1').expect(200);
      assert.deepEqual(res.body.config.errors, CONFIG_ERRORS);
    });

    it('is not chosen by ?json=false', async () => {
      const res = await page('/gateway/v0/diag/?json=false').expect(200);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    });
  });

  describe('bad requests', () => {
    it('answers 400 with the error body for a json value it does not take, naming those it takes, and for json given twice', async () => {
      const res = await page('/gateway/v0/diag/?json=maybe').expect(400);
      assert.deepEqual(res.body, {
        code: 400,
        message: '400: Bad Request',
        detail: 'json must be true, 1 or empty (JSON), or false or 0 (the page)',
      });
      const twice = await page('/gateway/v0/diag/?json=true&json=false').expect(400);
      assert.equal(twice.body.detail, 'json must be given once');
    });

    it('answers 406 with the error body and the supported types for an Accept it cannot meet', async () => {
      const res = await page().set('Accept', 'image/png').expect(406);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(res.body.code, 406);
      assert.equal(res.body.detail, 'supported types: text/html, application/json, application/xml');
    });

    it('answers 405 with Allow to a POST', async () => {
      const res = await request(server).post('/gateway/v0/diag/').expect(405);
      assert.match(String(res.headers.allow), /GET/);
      assert.equal(res.body.code, 405);
    });

    it('answers 404 with the error body below the page', async () => {
      const res = await page('/gateway/v0/diag/nothing').expect(404);
      assert.deepEqual(res.body, { code: 404, message: '404: Not Found' });
    });

    it('answers 404 below the page to a method no route takes, as to any other', async () => {
      const res = await request(server).trace('/gateway/v0/diag/nothing').expect(404);
      assert.equal(res.headers.allow, undefined);
      assert.deepEqual(res.body, { code: 404, message: '404: Not Found' });
    });
  });

  describe('the slashless path', () => {
    it('redirects 301 to the slash form, keeping the query', async () => {
      const res = await page('/gateway/v0/diag?json=true').expect(301);
      assert.equal(res.headers.location, '/gateway/v0/diag/?json=true');
      const bare = await page('/gateway/v0/diag').expect(301);
      assert.equal(bare.headers.location, '/gateway/v0/diag/');
    });

    it('says the redirect varies on Accept, as its body does', async () => {
      const html = await page('/gateway/v0/diag').set('Accept', 'text/html').expect(301);
      assert.match(html.headers['content-type'], /^text\/html/);
      assert.equal(html.headers.vary, 'Accept');
    });

    it('redirects other methods with 308', async () => {
      const res = await request(server).post('/gateway/v0/diag').expect(308);
      assert.equal(res.headers.location, '/gateway/v0/diag/');
    });

    it('does not redirect the page served on its own at /', async () => {
      const res = await request(diag.app!.callback()).get('/').expect(200);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    });
  });
});
