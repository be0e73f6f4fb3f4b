/**
 * Matching a request by pattern never holds the event loop long, whatever
 * the configuration: each pattern is matched by an automaton built when the
 * configuration loads (one that would not fit its bounds is refused, with
 * the reason), and what the patterns read for one request is bounded, past
 * which the request is refused (414 for the path and query, 431 for a
 * header), for every field that holds a pattern.
 */
import assert from 'node:assert/strict';
import { ConfigError, createGateway, parseConfigFiles } from '../../../src/gateway';
import { DEFAULT_MATCH_BUDGET } from '../../../src/gateway/match/regex';
import { serviceManifest } from '../../support/records';
import { routingRig, type Rig } from '../../support/routing-rig';

/** Patterns that read the whole of any text they are held against, none of which matches a text of `a`s. */
const WHOLE_READERS = 100;
const whole = (i: number) => `.*z${i}`;

/** A text of `a`s long enough that the patterns above, all of them, read past the budget; one of them alone does not. */
const LONG = 'a'.repeat(Math.ceil((DEFAULT_MATCH_BUDGET * 1.2) / WHOLE_READERS));

const MODULE = { apiVersion: 'gateway/v1', kind: 'Module', name: 'ambassador', config: { regex_max_size: 5000 } };

function problemsOf(records: string): string[] {
  const parsed = parseConfigFiles([{ file: 'config/services.yaml', text: serviceManifest('catalog', records) }]);
  if (!parsed.ok) return parsed.problems.map((p) => p.text);
  try {
    void createGateway({ config: parsed.config }).close();
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems.map((p) => p.text);
  }
  return [];
}

const mapping = (fields: string) =>
  `apiVersion: gateway/v1\nkind: Mapping\nname: heavy\nservice: 127.0.0.1:9\n${fields}---\napiVersion: gateway/v1\nkind: Module\nname: ambassador\nconfig: {regex_max_size: 5000}\n`;

describe('gateway patterns matched within bounds', () => {
  let rig: Rig;

  before(async () => {
    rig = await routingRig(
      () => [
        ...Array.from({ length: WHOLE_READERS }, (_, i) => ({
          name: `path-${i}`,
          prefix: `/${whole(i)}`,
          prefix_regex: true,
        })),
        ...Array.from({ length: WHOLE_READERS }, (_, i) => ({
          name: `header-${i}`,
          prefix: '/by-header/',
          regex_headers: { 'x-token': whole(i) },
        })),
        ...Array.from({ length: WHOLE_READERS }, (_, i) => ({
          name: `query-${i}`,
          prefix: '/by-query/',
          regex_query_parameters: { q: whole(i) },
        })),
        ...Array.from({ length: WHOLE_READERS }, (_, i) => ({
          name: `host-${i}`,
          prefix: '/by-host/',
          host: whole(i),
          host_regex: true,
        })),
        {
          name: 'rewritten',
          prefix: '/rewrite/',
          regex_rewrite: { pattern: '^/rewrite/((x|.)*?)((y|.)*?)$', substitution: '/to/\\1\\3' },
        },
        {
          name: 'redirected',
          prefix: '/redirect/',
          service: 'example.org',
          host_redirect: true,
          regex_redirect: { pattern: '^/redirect/((x|.)*?)((y|.)*?)$', substitution: '/to/\\1\\3' },
        },
        { name: 'fallback', prefix: '/' },
      ],
      { extra: [MODULE] },
    );
  });
  after(() => rig.close());

  it('routes a path every pattern reads whole, and refuses with 414 one they would read past the budget', async () => {
    const short = await rig.call(`/${'a'.repeat(200)}z7`);
    assert.deepEqual([short.status, short.route], [200, 'path-7']);
    const long = await rig.call(`/${LONG}`);
    assert.equal(long.status, 414);
    assert.equal(long.route, undefined);
    assert.deepEqual(long.answer.json(), {
      code: 414,
      message: '414: URI Too Long',
      detail: `the path or query is too long to be matched against the routes' patterns (more than ${DEFAULT_MATCH_BUDGET} steps)`,
    });
  });

  it('refuses with 431 a header the header patterns would read past the budget, and routes a shorter one', async () => {
    const short = await rig.call('/by-header/x', { headers: { 'x-token': `${'a'.repeat(300)}z3` } });
    assert.equal(short.route, 'header-3');
    const long = await rig.call('/by-header/x', { headers: { 'x-token': LONG } });
    assert.equal(long.status, 431);
    assert.equal(long.route, undefined);
    assert.match(long.answer.json().detail, /^a header is too long to be matched against the routes' patterns/);
  });

  it('refuses with 414 a query argument the query patterns would read past the budget', async () => {
    assert.equal((await rig.call(`/by-query/x?q=${'a'.repeat(300)}z5`)).route, 'query-5');
    const long = await rig.call(`/by-query/x?q=${LONG}`);
    assert.equal(long.status, 414);
    assert.match(long.answer.json().detail, /^the path or query is too long to be matched/);
  });

  it('refuses with 431 a Host the host patterns would read past the budget', async () => {
    assert.equal((await rig.call('/by-host/x', { headers: { host: `${'a'.repeat(300)}z9` } })).route, 'host-9');
    const long = await rig.call('/by-host/x', { headers: { host: LONG } });
    assert.equal(long.status, 431);
    assert.match(long.answer.json().detail, /^a header is too long to be matched/);
  });

  it('rewrites and redirects a path by regex, and refuses with 414 one too long for the search to stay in bounds', async () => {
    const rewritten = await rig.call('/rewrite/some/thing');
    assert.deepEqual([rewritten.route, rewritten.url], ['rewritten', '/to/some/thing']);
    const redirected = await rig.call('/redirect/some/thing');
    assert.equal(redirected.status, 301);
    assert.equal(redirected.answer.headers.location, 'http://example.org/to/some/thing');
    // Four groups, and at most 15 threads at once: some 7000 characters within the budget.
    const long = 'a'.repeat(5000);
    assert.deepEqual(
      [(await rig.call(`/rewrite/${long}`)).url, (await rig.call(`/redirect/${long}`)).answer.headers.location],
      [`/to/${long}`, `http://example.org/to/${long}`],
    );
    for (const prefix of ['/rewrite/', '/redirect/']) {
      const tooLong = await rig.call(`${prefix}${'a'.repeat(9000)}`);
      assert.equal(tooLong.status, 414, prefix);
      assert.equal(tooLong.route, undefined, prefix);
      assert.match(tooLong.answer.json().detail, /^the path or query is too long to be matched/, prefix);
    }
  });
});

describe('gateway patterns refused when their matching cannot be bounded', () => {
  it('refuses a pattern whose automaton would outgrow its bounds, with the reason, as the Module allows its size', () => {
    // About 4000 instructions of `.*a`: each character could be any of them, and re2js fell back to trying them all.
    const pattern = `/${'.*a'.repeat(1300)}`;
    const problems = problemsOf(mapping(`prefix: '${pattern}'\nprefix_regex: true\n`));
    assert.equal(problems.length, 1, problems.join('\n'));
    // The pattern's first 80 characters: the problem stays readable whatever its length.
    assert.ok(
      problems[0].startsWith(
        `config/services.yaml: service catalog: Mapping heavy: prefix: '${pattern.slice(0, 80)}…' needs an automaton of more than 4096 states or `,
      ),
      problems[0].slice(0, 300),
    );
    assert.match(problems[0], /steps to build, which could not be matched in bounded time: simplify it/);
  });

  it('refuses, with the same reason, a small pattern whose states multiply, in every field that holds a pattern', () => {
    const explosive = '.*a.{16}';
    for (const fields of [
      `prefix: '/${explosive}'\nprefix_regex: true\n`,
      `prefix: /x/\nregex_headers: {x-a: '${explosive}'}\n`,
      `prefix: /x/\nregex_query_parameters: {a: '${explosive}'}\n`,
      `prefix: /x/\nhost: '${explosive}'\nhost_regex: true\n`,
      `prefix: /x/\nmethod: '${explosive}'\nmethod_regex: true\n`,
    ]) {
      const problems = problemsOf(mapping(fields));
      assert.equal(problems.length, 1, fields);
      assert.match(problems[0], /needs an automaton of more than 4096 states/, fields);
    }
  });

  it('refuses a pattern of many counted copies before compiling it, and one longer than 4096 characters', () => {
    const copies = problemsOf(mapping(`prefix: '/${'[a-z]{1000}'.repeat(6)}'\nprefix_regex: true\n`));
    assert.match(copies[0], /compiles to a program of at least 6001 instructions, over the limit of 5000/);
    const beyondAny = problemsOf(mapping(`prefix: '/${'[a-z]{1000}'.repeat(40)}'\nprefix_regex: true\n`));
    assert.match(
      beyondAny[0],
      /compiles to a program of at least 40001 instructions, over the 20000 that config\.regex_max_size may allow/,
    );
    const long = problemsOf(mapping(`prefix: '/${'a|'.repeat(2100)}b'\nprefix_regex: true\n`));
    assert.match(long[0], /is 4202 characters long, over the limit of 4096: split it among Mappings/);
  });

  it('refuses before compiling a pattern of many Unicode classes, or of wide ranges matched in any case', () => {
    const classes = problemsOf(mapping(`prefix: '/(${'\\pL|'.repeat(64)}\\pN)'\nprefix_regex: true\n`));
    assert.match(classes[0], /holds 65 Unicode classes \(\\pL, \\p\{Greek\}\), over the limit of 64/);
    const wide = '[\\x{41}-\\x{1E943}]';
    const folded = problemsOf(mapping(`prefix: /x/\nregex_headers: {x-a: '(?i)${wide}${wide}${wide}'}\n`));
    assert.match(folded[0], /matches 375561 characters of its classes in any case, over the limit of 262144/);
    assert.deepEqual(problemsOf(mapping(`prefix: /x/\nregex_headers: {x-a: '${wide}${wide}${wide}'}\n`)), []);
  });

  it('refuses a rewrite or redirect pattern whose groups would make its searches refuse ordinary paths', () => {
    // 609 instructions, all of them threads at once, and 151 groups: re2js copies every group's position for each thread at each character.
    const grouped = `^/r/(${'(x|.)*?'.repeat(150)})$`;
    for (const field of ['regex_rewrite', 'regex_redirect']) {
      const redirect = field === 'regex_redirect' ? 'host_redirect: true\n' : '';
      const problems = problemsOf(
        mapping(`prefix: /r/\n${redirect}${field}: {pattern: '${grouped}', substitution: '/\\1'}\n`),
      );
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(
        problems[0],
        new RegExp(
          `${field}\\.pattern: '.*' \\(151 groups, up to \\d+ threads of its program at once\\) could rewrite a path of \\d+ characters at most within what one request may make a search read`,
        ),
      );
    }
    assert.deepEqual(
      problemsOf(
        mapping(`prefix: /r/\nregex_rewrite: {pattern: '^/r/(?:${'(?:x|.)*?'.repeat(150)})$', substitution: '/'}\n`),
      ),
      [],
    );
  });

  it('refuses a regex_max_size over 20 000, whose programs would hold the event loop while they compile', () => {
    assert.deepEqual(problemsOf(mapping('prefix: /x/\n').replace('regex_max_size: 5000', 'regex_max_size: 20001')), [
      'config/services.yaml: service catalog: Module ambassador: config.regex_max_size: must be at most 20000: a larger program holds the event loop while it is compiled',
    ]);
  });
});
