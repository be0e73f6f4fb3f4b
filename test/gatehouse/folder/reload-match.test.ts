/**
 * A reload of Mappings with patterns, canary weights and redirects from a
 * folder large enough to be checked on the worker thread: what crosses the
 * thread is plain records, and the patterns are compiled where they run.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { padded } from '../../support/hostile-yaml';
import { copyConfig, type TempConfig } from '../../support/config-folder';
import { startGatehouse, type Running } from '../../support/gatehouse';

/** Past the 32 KiB from which a folder is checked on the worker thread. */
const LARGE = 40 * 1024;

const MATCHING = [
  // A pattern whose groups pick the API version and the rest of the path.
  "apiVersion: gateway/v1\nkind: Mapping\nname: versioned\nprefix: '/api-(v[12])/.*'\nprefix_regex: true\nservice: api\nregex_rewrite: {pattern: '^/api-(v[12])/(.*)$', substitution: '/\\1/\\2'}\nbypass_auth: true\n",
  'apiVersion: gateway/v1\nkind: Mapping\nname: stable\nprefix: /canary/\nservice: api\nrewrite: /v1/\nbypass_auth: true\nweight: 0\n',
  'apiVersion: gateway/v1\nkind: Mapping\nname: canary\nprefix: /canary/\nservice: api\nrewrite: /v2/\nbypass_auth: true\nweight: 100\n',
  'apiVersion: gateway/v1\nkind: Mapping\nname: moved\nprefix: /old/\nservice: https://blog.example.org\nhost_redirect: true\nprefix_redirect: /new/\nbypass_auth: true\n',
].join('---\n');

describe('gatehouse reload of pattern, canary and redirect Mappings checked on the worker thread', function () {
  let config: TempConfig;
  let running: Running;

  beforeEach(async () => {
    config = copyConfig();
    running = await startGatehouse({ configDir: config.dir });
  });

  afterEach(async () => {
    await running?.stop();
    config?.remove();
  });

  it('routes by the patterns, weights and redirects of a folder checked off the event loop', async () => {
    config.write('matching.yaml', padded(MATCHING, LARGE));
    assert.deepEqual(await running.gatehouse.reload(), { ok: true });
    const content = async (path: string) => (await request(running.url).get(path).expect(200)).body.content;
    const [v1, v2] = [await content('/v1/messages/1'), await content('/v2/messages/1')];
    assert.notEqual(v1, v2);
    assert.equal(await content('/api-v2/messages/1'), v2);
    assert.equal(await content('/api-v1/messages/1'), v1);
    // Weight 0 and 100: every request goes to the canary, whose rewrite is /v2/.
    for (let i = 0; i < 5; i++) assert.equal(await content('/canary/messages/1'), v2);
    const moved = await request(running.url).get('/old/page?x=1').expect(301);
    assert.equal(moved.headers.location, 'https://blog.example.org/new/page?x=1');
    const shares = running.gatehouse.gateway
      .snapshot()
      .routes.filter((r) => r.prefix === '/canary/')
      .map((r) => [r.name, r.share]);
    assert.deepEqual(shares.sort(), [
      ['canary', 100],
      ['stable', 0],
    ]);
  });

  it("refuses, naming the field, a pattern over the Module's regex_max_size, though the checking thread found its syntax right", async () => {
    const module = 'apiVersion: gateway/v1\nkind: Module\nname: ambassador\nconfig: {regex_max_size: 10}\n';
    config.write('matching.yaml', padded(`${MATCHING}---\n${module}`, LARGE));
    const outcome = await running.gatehouse.reload();
    assert.equal(outcome.ok, false);
    assert.deepEqual(
      outcome.ok
        ? []
        : outcome.problems.map((p) =>
            p.replace(/compiles to a program of \d+ instructions/, 'compiles to a program of N instructions'),
          ),
      [
        `${config.dir}/matching.yaml: Mapping versioned: prefix: '/api-(v[12])/.*' compiles to a program of N instructions, over the limit of 10 (the Module's config.regex_max_size): simplify it or raise the limit`,
        `${config.dir}/matching.yaml: Mapping versioned: regex_rewrite.pattern: '^/api-(v[12])/(.*)$' compiles to a program of N instructions, over the limit of 10 (the Module's config.regex_max_size): simplify it or raise the limit`,
      ],
    );
    await request(running.url).get('/api-v2/messages/1').expect(404);
  });

  it('refuses a pattern that bypasses auth before a prefix that needs it, from a folder checked on the worker thread', async () => {
    const shadow =
      "apiVersion: gateway/v1\nkind: Mapping\nname: docs\nprefix: '/v1/hotel.*'\nprefix_regex: true\nservice: api\nbypass_auth: true\n";
    config.write('matching.yaml', padded(`${MATCHING}---\n${shadow}`, LARGE));
    const outcome = await running.gatehouse.reload();
    assert.equal(outcome.ok, false);
    const problems = outcome.ok ? [] : outcome.problems;
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(
      problems[0],
      /matching\.yaml: Mapping docs: prefix: takes the paths of Mapping '[\w-]+' \(\/v1\/hotels\/?\), which needs auth, before it in match order/,
    );
    await request(running.url).get('/v1/hotels/').expect(401);
  });
});
