/**
 * The match, weight and redirect fields of a Mapping, read from a config
 * file: what loads, and a clear problem naming the field for each bad value,
 * with file, service and record, including those found when the
 * configuration is built (a program too large, the Module's limit).
 */
import assert from 'node:assert/strict';
import { ConfigError, createGateway, parseConfigFiles } from '../../../src/gateway';
import { mappingFields, serviceManifest } from '../../support/records';

const { at: AT, load, problems } = mappingFields('catalog', 'catalog-route', '/catalog/');

/** The problems a configuration of `records` (YAML) is refused with when the gateway is built. */
function builtProblems(records: string): string[] {
  const parsed = parseConfigFiles([{ file: 'config/services.yaml', text: serviceManifest('catalog', records) }]);
  if (!parsed.ok) return assert.fail(parsed.problems.map((p) => p.text).join('\n'));
  try {
    void createGateway({ config: parsed.config }).close();
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems.map((p) => p.text);
  }
  return assert.fail('the gateway should have been refused');
}

const MAPPING = 'apiVersion: gateway/v1\nkind: Mapping\nname: catalog-route\nservice: 127.0.0.1:9\n';

describe('gateway config: Mapping match fields', () => {
  it('loads patterns as written, a method pattern as written and an exact method in upper case', () => {
    const m = load(
      "prefix_regex: false\nmethod: 'GET|HEAD'\nmethod_regex: true\nregex_headers: {X-Client: '(web|app)-[0-9]+'}",
    );
    assert.equal(m.method, 'GET|HEAD');
    assert.deepEqual(m.regex_headers, { 'x-client': '(web|app)-[0-9]+' });
    assert.equal(load('method: patch').method, 'PATCH');
    assert.deepEqual(load("query_parameters: {preview: 'yes', draft: true}").query_parameters, {
      preview: 'yes',
      draft: true,
    });
  });

  it('refuses a pattern RE2 does not read, saying why, in each field that holds one', () => {
    assert.deepEqual(problems("regex_headers: {User-Agent: '(?=.*Android).*'}"), [
      `${AT} regex_headers.User-Agent: '(?=.*Android).*' is no RE2 expression (invalid or unsupported Perl syntax: (?=); RE2, as Envoy uses it, has no lookahead or lookbehind`,
    ]);
    assert.deepEqual(problems("regex_query_parameters: {page: '[0-9'}"), [
      `${AT} regex_query_parameters.page: '[0-9' is no RE2 expression (missing closing ]: [0-9)`,
    ]);
    assert.deepEqual(problems("method: '(GET'\nmethod_regex: true"), [
      `${AT} method: '(GET' is no RE2 expression (missing closing ): (GET)`,
    ]);
    assert.deepEqual(problems("host: '(a\\1)'\nhost_regex: true"), [
      `${AT} host: '(a\\1)' is no RE2 expression (invalid escape sequence: \\1)`,
    ]);
  });

  it('refuses a prefix_regex that is no pattern, holds what a normalised path never does, or comes with case_sensitive or prefix_exact', () => {
    const regex = mappingFields('catalog', 'catalog-route', "'/(en|fr/'");
    assert.deepEqual(regex.problems('prefix_regex: true'), [
      "config/services.yaml: service catalog: Mapping catalog-route: prefix: '/(en|fr/' is no RE2 expression (missing closing ): /(en|fr/)",
    ]);
    const accented = mappingFields('catalog', 'catalog-route', "'/café/.*'");
    assert.deepEqual(accented.problems('prefix_regex: true'), [
      "config/services.yaml: service catalog: Mapping catalog-route: prefix: holds 'é', which a normalised path never does: it holds %C3%A9 instead",
    ]);
    assert.deepEqual(problems('prefix_regex: true\ncase_sensitive: false'), [
      `${AT} case_sensitive: does not apply to prefix_regex (as in Envoy): start the pattern with (?i) to match in any case`,
    ]);
    assert.deepEqual(problems('prefix_regex: true\nprefix_exact: true'), [
      `${AT} prefix_exact: give prefix_regex or prefix_exact, not both`,
    ]);
    assert.deepEqual(problems('prefix_regex: "yes"'), [`${AT} prefix_regex: expected boolean, received string`]);
  });

  it('refuses method_regex or host_regex without the field they apply to, and an exact method or host that is none', () => {
    assert.deepEqual(problems('method_regex: true'), [`${AT} method_regex: applies to method, which is not given`]);
    assert.deepEqual(problems('host_regex: true'), [`${AT} host_regex: applies to host, which is not given`]);
    assert.deepEqual(problems("method: 'GET|HEAD'"), [`${AT} method: must be an HTTP method`]);
  });

  it('refuses header patterns on a name that is none, on Host, given twice, or not as strings', () => {
    assert.deepEqual(problems("regex_headers: {'X Client': 'a'}"), [
      `${AT} regex_headers.X Client: must be an HTTP header name`,
    ]);
    assert.deepEqual(problems("regex_headers: {Host: 'api\\\\..*'}"), [
      `${AT} regex_headers.Host: would be held against the Host as the client spelt it: write host with host_regex: true, held against the host's normal form`,
    ]);
    assert.deepEqual(problems("regex_headers: {X-A: 'a', x-a: 'b'}"), [
      `${AT} regex_headers.x-a: is given twice (header names are case-insensitive)`,
    ]);
    assert.deepEqual(problems('regex_headers: {X-A: 7}'), [
      `${AT} regex_headers.X-A: must be a string (a regular expression), got a number`,
    ]);
  });

  it('refuses a query value that is no string or true, saying to quote it', () => {
    assert.deepEqual(problems('query_parameters: {page: 2}'), [
      `${AT} query_parameters.page: must be a string (the exact value) or true (any value), got a number: quote the value, as YAML reads an unquoted number or false as no string`,
    ]);
  });

  it('refuses a regex_rewrite whose substitution names a group the pattern lacks, or holds a stray backslash', () => {
    assert.deepEqual(problems("regex_rewrite: {pattern: '^/catalog/([0-9]+)$', substitution: '/items/\\2'}"), [
      `${AT} regex_rewrite.substitution: refers to group \\2, but the pattern has one group`,
    ]);
    assert.deepEqual(problems("regex_rewrite: {pattern: 'x', substitution: '/a\\b'}"), [
      `${AT} regex_rewrite.substitution: holds a backslash that stands before neither a group number (\\1) nor another backslash (\\\\ for one)`,
    ]);
    assert.deepEqual(problems("regex_rewrite: {pattern: 'x'}"), [
      `${AT} regex_rewrite.substitution: required (expected string)`,
    ]);
    assert.deepEqual(problems("regex_rewrite: {pattern: 'x', substitution: '/', flags: i}"), [
      `${AT} regex_rewrite.flags: unknown field`,
    ]);
  });

  it('refuses a weight that is no whole number from 0 to 100', () => {
    for (const weight of ['101', '-1', '2.5']) {
      assert.deepEqual(problems(`weight: ${weight}`), [`${AT} weight: must be a whole number from 0 to 100`], weight);
    }
    assert.deepEqual(problems('weight: "10"'), [`${AT} weight: expected number, received string`]);
  });
});

describe('gateway config: redirect fields', () => {
  /** The problems of a redirect Mapping to `service`; none when it loads. */
  function redirectTo(service: string): string[] {
    const text = serviceManifest(
      'blog',
      `apiVersion: gateway/v1\nkind: Mapping\nname: moved\nprefix: /old/\nservice: '${service}'\nhost_redirect: true\n`,
    );
    const parsed = parseConfigFiles([{ file: 'config/services.yaml', text }]);
    return parsed.ok ? [] : parsed.problems.map((p) => p.text);
  }

  it('loads a redirect to a host, with an optional scheme and port', () => {
    for (const service of [
      'blog.example.org',
      'https://blog.example.org',
      'http://blog.example.org:8080/',
      '[2001:db8::1]:8443',
    ]) {
      assert.deepEqual(redirectTo(service), [], service);
    }
  });

  it('refuses redirect fields without host_redirect: true, as Emissary would ignore them', () => {
    assert.deepEqual(problems('path_redirect: /new\nredirect_response_code: 302'), [
      `${AT} path_redirect: applies with host_redirect: true, which is not set`,
      `${AT} redirect_response_code: applies with host_redirect: true, which is not set`,
    ]);
  });

  it('refuses a status that is no redirect Envoy sends, and paths that are none', () => {
    assert.deepEqual(problems('host_redirect: true\nredirect_response_code: 300'), [
      `${AT} redirect_response_code: must be one of 301, 302, 303, 307, 308`,
    ]);
    assert.deepEqual(problems('host_redirect: true\npath_redirect: new'), [`${AT} path_redirect: must start with /`]);
    assert.deepEqual(problems("host_redirect: true\nprefix_redirect: '/new?x=1'"), [
      `${AT} prefix_redirect: must be a path, without ?, # or spaces`,
    ]);
  });

  it('refuses two ways of writing the path, and the fields a redirect has no use for', () => {
    assert.deepEqual(problems('host_redirect: true\npath_redirect: /a\nprefix_redirect: /b'), [
      `${AT} prefix_redirect: give one of path_redirect, prefix_redirect and regex_redirect, not path_redirect and prefix_redirect`,
    ]);
    assert.deepEqual(problems('host_redirect: true\nweight: 10\nhost_rewrite: example.org'), [
      `${AT} host_rewrite: does not apply to a redirect (host_redirect: true), which the gateway answers without calling a service`,
      `${AT} weight: does not apply to a redirect (host_redirect: true), which the gateway answers without calling a service`,
    ]);
  });

  it('refuses a service that names more than a host to redirect to', () => {
    for (const service of ['https://blog.example.org/posts', 'ftp://blog.example.org', 'user@blog.example.org']) {
      assert.deepEqual(redirectTo(service), [
        `config/services.yaml: service blog: Mapping moved: service: '${service}' is not where a redirect (host_redirect: true) sends the client: a host name or address, with an optional :port, after an optional http:// or https://; write the path in path_redirect or prefix_redirect`,
      ]);
    }
  });
});

describe('gateway config: the size of patterns', () => {
  const big = `(${Array.from({ length: 60 }, (_, i) => `w${i}x${i}y`).join('|')})`;

  it("refuses a pattern that compiles to more instructions than Emissary's default of 200", () => {
    const found = builtProblems(`${MAPPING}prefix: /words/\nregex_headers: {X-Word: '${big}'}\n`);
    assert.equal(found.length, 1);
    assert.match(
      found[0],
      /^config\/services\.yaml: service catalog: Mapping catalog-route: regex_headers\.x-word: '.*' compiles to a program of \d+ instructions, over the limit of 200 \(the Module's config\.regex_max_size\): simplify it or raise the limit$/,
    );
  });

  it("takes it under the Module's regex_max_size, and refuses a limit that is no whole number", () => {
    const parsed = parseConfigFiles([
      {
        file: 'config/services.yaml',
        text: serviceManifest(
          'catalog',
          `${MAPPING}prefix: /words/\nregex_headers: {X-Word: '${big}'}\n---\napiVersion: gateway/v1\nkind: Module\nname: gateway\nconfig: {regex_max_size: 2000}\n`,
        ),
      },
    ]);
    assert.ok(parsed.ok, parsed.ok ? '' : parsed.problems.map((p) => p.text).join('\n'));
    void createGateway({ config: parsed.config }).close();
    const bad = parseConfigFiles([
      {
        file: 'config/services.yaml',
        text: serviceManifest(
          'catalog',
          'apiVersion: gateway/v1\nkind: Module\nname: gateway\nconfig: {regex_max_size: 0}\n',
        ),
      },
    ]);
    assert.deepEqual(bad.ok ? [] : bad.problems.map((p) => p.text), [
      'config/services.yaml: service catalog: Module gateway: config.regex_max_size: must be a whole number of instructions',
    ]);
  });

  it('refuses a pattern that bypasses auth and comes before a prefix that needs it, on that prefix', () => {
    assert.deepEqual(
      builtProblems(
        `${MAPPING}prefix: /docs/internal/\n---\n${MAPPING.replace('catalog-route', 'pages')}prefix: '/(docs|blog|news)/.*'\nprefix_regex: true\nbypass_auth: true\n`,
      ),
      [
        "config/services.yaml: service catalog: Mapping pages: prefix: takes the paths of Mapping 'catalog-route' (/docs/internal/), which needs auth, before it in match order (a pattern is ordered by its length, as in Emissary), and lets them through without auth: give 'catalog-route' a higher precedence, or narrow the pattern",
      ],
    );
  });
});
