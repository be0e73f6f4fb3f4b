import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFromRecords, loadConfig, parseConfigFiles, type ConfigResult } from '../../../src/gateway';
import { aliasBomb } from '../../support/hostile-yaml';
import { serviceManifest } from '../../support/records';

const HOTELS = `
apiVersion: gateway/v1
kind: Mapping
name: hotels-mapping
prefix: /v1/hotels
service: hotel-booking
rewrite: ""
`;

function problemsOf(result: ConfigResult): string[] {
  assert.equal(result.ok, false, 'the config should have been refused');
  return result.ok ? [] : result.problems.map((p) => p.text);
}

function parse(text: string, file = 'config/services.yaml'): ConfigResult {
  return parseConfigFiles([{ file, text }]);
}

describe('gateway config loading', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-config-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads records from a Service annotation and from top-level documents alike', async () => {
    await writeFile(
      join(dir, 'services.yaml'),
      `${serviceManifest('hotels', HOTELS)}---
apiVersion: gateway/v1
kind: Mapping
name: cars-mapping
prefix: /v1/cars
service: car-booking
timeout_ms: 500
`,
    );
    const result = await loadConfig(dir);
    assert.ok(result.ok, JSON.stringify(result));
    const { mappings, sources, recordSources } = result.config;
    assert.deepEqual(
      mappings.map((m) => [m.name, m.prefix, m.service, m.rewrite, m.timeout_ms]),
      [
        ['hotels-mapping', '/v1/hotels', 'hotel-booking', '', 3000],
        ['cars-mapping', '/v1/cars', 'car-booking', '/', 500],
      ],
    );
    assert.deepEqual(sources, [join(dir, 'services.yaml')]);
    assert.deepEqual(recordSources?.get(mappings[0]), { file: join(dir, 'services.yaml'), service: 'hotels' });
    assert.deepEqual(recordSources?.get(mappings[1]), { file: join(dir, 'services.yaml') });
  });

  it('reads several records from one annotation, and AuthService and RateLimitService with their defaults', () => {
    const result = parse(
      serviceManifest(
        'gateway',
        `---
apiVersion: gateway/v1
kind: AuthService
name: authentication
auth_service: auth
allowed_authorization_headers: [X-Travel-User]
---
apiVersion: gateway/v1
kind: RateLimitService
name: ratelimit
service: ratelimit
`,
      ),
    );
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.config.mappings.length, 0);
    assert.deepEqual(result.config.authService?.allowed_authorization_headers, ['x-travel-user']);
    assert.equal(result.config.authService?.timeout_ms, 5000);
    assert.equal(result.config.authService?.status_on_error, 403);
    assert.equal(result.config.rateLimitService?.domain, 'gateway');
    assert.equal(result.config.rateLimitService?.timeout_ms, 20);
  });

  it('uses the annotation domain it is given', () => {
    const text = serviceManifest('hotels', HOTELS, 'example.org');
    assert.equal((parse(text) as { ok: true; config: { mappings: unknown[] } }).config.mappings.length, 0);
    const result = parseConfigFiles([{ file: 'x.yaml', text }], { annotationDomain: 'example.org' });
    assert.ok(result.ok);
    assert.equal(result.config.mappings.length, 1);
  });

  it('ignores ratelimit.yaml, bookings.yaml, sub-folders, dotfiles, other files and documents that are no gateway records', async () => {
    await writeFile(join(dir, 'ratelimit.yaml'), 'domain: gateway\ndescriptors: [\n');
    // Its own reader reports what is wrong with it, once.
    await writeFile(join(dir, 'bookings.yaml'), '');
    await mkdir(join(dir, 'ratelimit'));
    await writeFile(join(dir, 'ratelimit', 'more.yaml'), HOTELS);
    await writeFile(join(dir, '.hidden.yaml'), HOTELS);
    await writeFile(join(dir, 'users.htpasswd'), 'alice:$2y$05$xyz\n');
    await writeFile(join(dir, 'bookings.yml'), 'hotels:\n  - id: 1\n');
    await writeFile(
      join(dir, 'services.yaml'),
      `domain: gateway
descriptors:
  - key: generic_key
    value: x
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
---
${serviceManifest('hotels', HOTELS)}`,
    );
    const result = await loadConfig(dir);
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(
      result.config.mappings.map((m) => m.name),
      ['hotels-mapping'],
    );
    assert.deepEqual(result.config.sources, [join(dir, 'services.yaml')]);
  });

  it('refuses a file that holds no YAML document: a reload may see a file being written over, truncated or with only its heading comments', () => {
    for (const text of ['', '\n  \n', "# The gateway's routes.\n#\n# Records below.\n", '---\n', '\ufeff']) {
      const result = parseConfigFiles([
        { file: 'config/services.yaml', text },
        { file: 'config/extra.yaml', text: HOTELS },
      ]);
      assert.deepEqual(problemsOf(result), [
        'config/services.yaml: holds no YAML document (it is empty, or only comments): refused, since a file caught while it is being written would drop its records; delete the file to have none',
      ]);
    }
  });

  it('reads a file with a byte order mark, CRLF line endings, or a document separator at the end', () => {
    const manifest = serviceManifest('hotels', HOTELS);
    for (const text of [
      `\ufeff${manifest}`,
      manifest.replace(/\n/g, '\r\n'),
      `${manifest}---\n`,
      `${manifest}\n---\n...\n`,
    ]) {
      const result = parse(text);
      assert.ok(result.ok, JSON.stringify(result));
      assert.deepEqual(
        result.config.mappings.map((m) => m.name),
        ['hotels-mapping'],
      );
      assert.equal(result.config.mappings[0].prefix, '/v1/hotels');
    }
  });

  it('reports a tab in the indentation once, with its line', () => {
    const problems = problemsOf(parse('apiVersion: v1\nkind: Service\nmetadata:\n\tname: hotels\n  annotations: {}\n'));
    // Not what the parser made of the rest of that line besides.
    assert.deepEqual(problems, ['config/services.yaml: YAML: Tabs are not allowed as indentation at line 4, column 1']);
  });

  it('reports bad YAML with the file and line', () => {
    const problems = problemsOf(parse('apiVersion: gateway/v1\nkind: Mapping\n  name: x: y\n'));
    assert.equal(problems.length >= 1, true);
    assert.match(problems[0], /^config\/services\.yaml: YAML: .* at line 2, column 7$/);
  });

  it('reports bad YAML inside an annotation with the service', () => {
    const problems = problemsOf(parse(serviceManifest('hotels', 'kind: Mapping\nname: [x\n')));
    assert.match(problems[0], /^config\/services\.yaml: service hotels: annotation gatehouse\.io\/config: YAML: /);
  });

  it('gives the position of bad YAML inside a block annotation as a line and column of the file', () => {
    const text = serviceManifest(
      'hotels',
      'kind: Mapping\nname: hotels\nprefix: [/v1/hotels\nservice: hotel-booking\n',
    );
    const problems = problemsOf(parse(text));
    const position = /at line (\d+), column (\d+) of the file$/.exec(problems[0]);
    assert.ok(position, problems[0]);
    // yaml notices the unclosed [ on the line after it, at the indentation of that line.
    const lines = text.split('\n');
    assert.equal(lines[Number(position[1]) - 1], '      service: hotel-booking');
    assert.equal(Number(position[2]), 7);
  });

  it('refuses a list of records instead of passing over it', () => {
    const problems = problemsOf(parse(`- ${HOTELS.trim().split('\n').join('\n  ')}\n`));
    assert.deepEqual(problems, [
      'config/services.yaml: document 1 is a list of records: write each record as a document of its own, separated by ---',
    ]);
  });

  it('numbers a record without a name by its document in the file, manifests counted', () => {
    const text = `${serviceManifest('hotels', HOTELS)}---\n${HOTELS.replace('name: hotels-mapping\n', '')}`;
    assert.deepEqual(problemsOf(parse(text)), ['config/services.yaml: Mapping #2: name: required (expected string)']);
  });

  it('reports an unknown kind', () => {
    const problems = problemsOf(parse(serviceManifest('hotels', HOTELS.replace('kind: Mapping', 'kind: Mappin'))));
    assert.deepEqual(problems, [
      "config/services.yaml: service hotels: record hotels-mapping: kind: unknown kind 'Mappin'; expected one of Mapping, AuthService, RateLimitService, Module, TracingService, Host, TLSContext, Secret",
    ]);
  });

  it('reports a wrong apiVersion, in an annotation and at the top level', () => {
    const problems = problemsOf(
      parse(
        `${serviceManifest('hotels', HOTELS.replace('gateway/v1', 'gateway/v2'))}---\n${HOTELS.replace('gateway/v1', 'getaway/v1').replace('hotels-mapping', 'top')}`,
      ),
    );
    assert.deepEqual(problems, [
      'config/services.yaml: service hotels: Mapping hotels-mapping: apiVersion: must be gateway/v1',
      'config/services.yaml: Mapping top: apiVersion: must be gateway/v1',
    ]);
  });

  it('reports a missing field', () => {
    const problems = problemsOf(parse(serviceManifest('hotels', HOTELS.replace('service: hotel-booking\n', ''))));
    assert.deepEqual(problems, [
      'config/services.yaml: service hotels: Mapping hotels-mapping: service: required (expected string)',
    ]);
  });

  it('reports a wrong type with the field path', () => {
    const problems = problemsOf(parse(serviceManifest('hotels', `${HOTELS}timeout_ms: "300"\n`)));
    assert.deepEqual(problems, [
      'config/services.yaml: service hotels: Mapping hotels-mapping: timeout_ms: expected number, received string',
    ]);
  });

  it('takes timeout_ms: 0 on a Mapping as no timeout, as Emissary does, and refuses a negative one', () => {
    const zero = parse(serviceManifest('hotels', `${HOTELS}timeout_ms: 0\n`));
    assert.ok(zero.ok);
    assert.equal(zero.ok && zero.config.mappings[0].timeout_ms, 0);
    assert.deepEqual(problemsOf(parse(serviceManifest('hotels', `${HOTELS}timeout_ms: -1\n`))), [
      'config/services.yaml: service hotels: Mapping hotels-mapping: timeout_ms: Too small: expected number to be >=0',
    ]);
  });

  it('reports a wrong value deep in labels', () => {
    const problems = problemsOf(
      parse(
        serviceManifest(
          'hotels',
          `${HOTELS}labels:
  gateway:
    - request_label_group:
        - x-gateway-test-allow:
            header: x-gateway-test-allow
            omit_if_not_present: "yes"
`,
        ),
      ),
    );
    assert.equal(problems.length, 1);
    assert.deepEqual(problems, [
      'config/services.yaml: service hotels: Mapping hotels-mapping: labels.gateway.0.request_label_group.0.x-gateway-test-allow.omit_if_not_present: expected boolean, received string',
    ]);
  });

  it('reports an unknown field', () => {
    const problems = problemsOf(parse(serviceManifest('hotels', `${HOTELS}timeout: 3\n`)));
    assert.deepEqual(problems, [
      'config/services.yaml: service hotels: Mapping hotels-mapping: timeout: unknown field',
    ]);
  });

  it('reports a record without a name by its place', () => {
    const problems = problemsOf(
      parse(serviceManifest('hotels', `---\n${HOTELS}---\n${HOTELS.replace('name: hotels-mapping\n', '')}`)),
    );
    assert.deepEqual(problems, ['config/services.yaml: service hotels: Mapping #2: name: required (expected string)']);
  });

  it('reports a duplicate name, saying where the first one is', () => {
    const problems = problemsOf(
      parseConfigFiles([
        { file: 'config/a.yaml', text: serviceManifest('hotels', HOTELS) },
        { file: 'config/b.yaml', text: HOTELS },
      ]),
    );
    assert.deepEqual(problems, [
      "config/b.yaml: Mapping hotels-mapping: name: duplicate name: another Mapping is named 'hotels-mapping' (in config/a.yaml, service hotels)",
    ]);
  });

  it('allows the same name in different kinds', () => {
    const result = parse(
      `${HOTELS}---\napiVersion: gateway/v1\nkind: AuthService\nname: hotels-mapping\nauth_service: auth\n`,
    );
    assert.ok(result.ok, JSON.stringify(result));
  });

  it('reports a second AuthService and a second RateLimitService', () => {
    const auth = (name: string) => `apiVersion: gateway/v1\nkind: AuthService\nname: ${name}\nauth_service: auth\n`;
    const rl = (name: string) => `apiVersion: gateway/v1\nkind: RateLimitService\nname: ${name}\nservice: ratelimit\n`;
    const problems = problemsOf(parse([auth('a1'), auth('a2'), rl('r1'), rl('r2')].join('---\n')));
    assert.deepEqual(problems, [
      "config/services.yaml: AuthService a2: only one AuthService is allowed; 'a1' (in config/services.yaml) is the first",
      "config/services.yaml: RateLimitService r2: only one RateLimitService is allowed; 'r1' (in config/services.yaml) is the first",
    ]);
  });

  it('reports an annotation that is not a string and a record that is not a mapping', () => {
    const problems = problemsOf(
      parse(`kind: Service
metadata:
  name: a
  annotations:
    gatehouse.io/config: 3
---
${serviceManifest('b', '- just\n- a list')}`),
    );
    assert.deepEqual(problems, [
      'config/services.yaml: service a: metadata.annotations.gatehouse.io/config: expected a YAML string of records',
      'config/services.yaml: service b: record #1: expected a record (a YAML mapping), got a list',
    ]);
  });

  it('names a file that cannot be read, and a link to nowhere as such', async () => {
    await writeFile(join(dir, 'services.yaml'), HOTELS);
    await symlink('old/services.yaml', join(dir, 'extra.yaml'));
    assert.deepEqual(problemsOf(await loadConfig(dir)), [
      `${join(dir, 'extra.yaml')}: is a symbolic link to old/services.yaml, which does not exist`,
    ]);
  });

  it('collects every problem of every file, and gives no config at all', async () => {
    await writeFile(join(dir, 'a.yaml'), serviceManifest('hotels', `${HOTELS}timeout_ms: x\nprecedence: high\n`));
    await writeFile(join(dir, 'b.yaml'), 'kind: Mapping\nname: [\n');
    await writeFile(join(dir, 'c.yaml'), `${HOTELS.replace('hotels-mapping', 'fine')}`);
    const result = await loadConfig(dir);
    assert.equal(result.ok, false);
    assert.equal('config' in result, false);
    const problems = problemsOf(result);
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.ok(problems.some((p) => p.endsWith('Mapping hotels-mapping: timeout_ms: expected number, received string')));
    assert.ok(problems.some((p) => p.endsWith('Mapping hotels-mapping: precedence: expected number, received string')));
    assert.ok(problems.some((p) => p.startsWith(`${join(dir, 'b.yaml')}: YAML: `)));
  });

  it('refuses a rewrite or prefix that is not a path', () => {
    const problems = problemsOf(
      parse(`${HOTELS.replace('rewrite: ""', 'rewrite: bookings/').replace('/v1/hotels', '/v1/hotels?x=1')}`),
    );
    assert.deepEqual(problems.sort(), [
      'config/services.yaml: Mapping hotels-mapping: prefix: must be a path, without ? or #',
      'config/services.yaml: Mapping hotels-mapping: rewrite: must be empty or a path starting with /',
    ]);
  });

  it('reports a folder that does not exist', async () => {
    const problems = problemsOf(await loadConfig(join(dir, 'nope')));
    assert.deepEqual(problems, [`${join(dir, 'nope')}: cannot read the config folder: no such folder`]);
  });

  it('reports a config folder that is a file', async () => {
    const file = join(dir, 'services.yaml');
    await writeFile(file, HOTELS);
    const problems = problemsOf(await loadConfig(file));
    assert.deepEqual(problems, [`${file}: cannot read the config folder: not a folder`]);
  });

  it('refuses a file that uses more than 100 aliases (an alias bomb), at the top or in an annotation, naming the file', () => {
    assert.deepEqual(problemsOf(parse(`${HOTELS}---\n${aliasBomb()}`)), [
      'config/services.yaml: YAML: document 2: uses aliases more than 100 times: refused, as a file that expands without bound would be',
    ]);
    const annotated = problemsOf(parse(serviceManifest('hotels', aliasBomb())));
    assert.deepEqual(annotated, [
      'config/services.yaml: service hotels: annotation gatehouse.io/config: YAML: uses aliases more than 100 times: refused, as a file that expands without bound would be',
    ]);
  });

  it('reports every item of a list of 150 000 wrong items, instead of overflowing the stack while it explains them', () => {
    const result = configFromRecords([
      {
        apiVersion: 'gateway/v1',
        kind: 'Module',
        name: 'ambassador',
        config: { cors: { origins: Array(150_000).fill(1) } },
      },
    ]);
    const problems = problemsOf(result);
    assert.equal(problems.length, 150_000);
    assert.equal(problems[0], 'Module ambassador: config.cors.origins.0: expected string, received number');
  });

  it('refuses a file over the size limit by name, reads the others, and passes over a folder named like a file', async () => {
    await writeFile(join(dir, 'services.yaml'), HOTELS);
    await writeFile(join(dir, 'big.yaml'), `${HOTELS.replace('hotels-mapping', 'big')}${'#'.repeat(600)}\n`);
    await mkdir(join(dir, 'folder.yaml'));
    assert.deepEqual(problemsOf(await loadConfig(dir, { fileSizeLimit: 512 })), [
      `${join(dir, 'big.yaml')}: is larger than the file size limit of 512 bytes (703 bytes): refused; raise fileSizeLimit (GATEHOUSE_FILE_SIZE_LIMIT) if it is meant to be that large`,
    ]);
    const whole = await loadConfig(dir);
    assert.ok(whole.ok);
    assert.deepEqual(whole.config.sources, [join(dir, 'big.yaml'), join(dir, 'services.yaml')]);
  });
});
