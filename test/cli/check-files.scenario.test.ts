/**
 * `gatehouse check` says what it made of every entry of the folder, counts
 * what the folder holds, and warns of a document written for a file of
 * another kind than its name says: run as a user runs it, on real folders.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAll, REPO_ROOT, runCli } from '../support/process';

/** envoyproxy/ratelimit's own example file, as a user of that service has it. */
const ENVOY_LIMITS = `domain: mongo_cps
descriptors:
  - key: database
    value: users
    rate_limit:
      unit: second
      requests_per_unit: 500
`;

const MAPPING = `apiVersion: gateway/v1
kind: Mapping
name: x
prefix: /x/
service: 127.0.0.1:9000
bypass_auth: true
`;

const RATE_LIMIT_SERVICE = `apiVersion: gateway/v1
kind: RateLimitService
name: limits
service: ratelimit
`;

const folders: string[] = [];

/** A new folder holding `files` (a name ending in / is a folder). */
function folderWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-check-files-'));
  folders.push(dir);
  for (const [name, text] of Object.entries(files)) {
    if (name.endsWith('/')) mkdirSync(join(dir, name), { recursive: true });
    else writeFileSync(join(dir, name), text);
  }
  return dir;
}

/** The Files section: each entry's name, what it was read as, and its detail. */
function filesSection(stdout: string): Map<string, [string, string]> {
  const lines = stdout.split('\n');
  const start = lines.indexOf('Files:');
  assert.ok(start >= 0, stdout);
  const entries = new Map<string, [string, string]>();
  for (const line of lines.slice(start + 1)) {
    const m = /^ {2}(\S+) {2,}(\S+(?: \S+)?) {2,}(.+)$/.exec(line);
    if (!m) break;
    entries.set(m[1], [m[2], m[3]]);
  }
  return entries;
}

const loadedLine = (stdout: string) => stdout.split('\n').find((l) => l.startsWith('Loaded: '));
const warnings = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('warning: '));

describe('gatehouse check, file by file', function () {
  after(async () => {
    await killAll();
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  });

  it('lists each file of the demo folder with what it was read as, and counts what the folder holds', async () => {
    const res = await runCli(['check', join(REPO_ROOT, 'config')]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(
      [...filesSection(res.stdout)],
      [
        ['bookings.yaml', ['bookings catalogue', '4 hotels, 3 cars, 3 hotel bookings, 2 car bookings']],
        ['ratelimit.yaml', ['limits', 'domain gateway: 2 rules']],
        ['services.yaml', ['records', '5 Mappings, 1 AuthService, 1 RateLimitService (annotations of 6 Services)']],
        ['users.htpasswd', ['users', '2 users']],
      ],
    );
    assert.equal(
      loadedLine(res.stdout),
      'Loaded: 5 Mappings, 1 AuthService, 1 RateLimitService, 2 users, 2 limits in 1 domain, 4 hotels, 3 cars, 5 bookings',
    );
    assert.deepEqual(warnings(res.stdout), []);
  });

  for (const name of ['limits.yaml', 'ratelimit-config.yaml']) {
    it(`warns of envoyproxy/ratelimit's limits saved as ${name}, read as records, and says the folder has no limits`, async () => {
      const dir = folderWith({ 'routes.yaml': MAPPING, [name]: ENVOY_LIMITS });
      const res = await runCli(['check', dir]);
      assert.equal(res.code, 0, res.stderr);
      assert.deepEqual(filesSection(res.stdout).get(name), [
        'records',
        'no record; ignored: document 1 (domain mongo_cps)',
      ]);
      assert.deepEqual(warnings(res.stdout), [
        `warning: ${join(dir, name)}: document 1 (domain mongo_cps) looks like rate limits in envoyproxy/ratelimit's format (domain, descriptors), but ${name} is read as records and the document is ignored: limits are read from ratelimit.yaml and ratelimit/*.yaml only`,
      ]);
      assert.match(loadedLine(res.stdout)!, /, no limits \(no ratelimit\.yaml, no ratelimit\/\),/);
    });
  }

  it('reads the same file as limits once it is named ratelimit.yaml, and counts its rules', async () => {
    const dir = folderWith({ 'routes.yaml': MAPPING, 'ratelimit.yaml': ENVOY_LIMITS });
    const res = await runCli(['check', dir]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(filesSection(res.stdout).get('ratelimit.yaml'), ['limits', 'domain mongo_cps: 1 rule']);
    assert.match(loadedLine(res.stdout)!, /, 1 limit in 1 domain,/);
    assert.deepEqual(warnings(res.stdout), []);
  });

  it('warns when a RateLimitService asks the built-in service of a folder without limits: every request is OK', async () => {
    const dir = folderWith({ 'routes.yaml': `${MAPPING}---\n${RATE_LIMIT_SERVICE}` });
    const res = await runCli(['check', dir]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(warnings(res.stdout), [
      'warning: no limits: the folder has no ratelimit.yaml and no ratelimit/, so the built-in rate-limit service that RateLimitService limits asks answers OK to every request',
    ]);
    assert.deepEqual(filesSection(res.stdout).get('routes.yaml'), ['records', '1 Mapping, 1 RateLimitService']);
  });

  it('refuses records written in a limits file, saying where records go, and exits 1', async () => {
    for (const file of ['ratelimit.yaml', 'ratelimit/routes.yaml']) {
      const dir = folderWith({ 'ratelimit/': '', [file]: MAPPING });
      const res = await runCli(['check', dir]);
      assert.equal(res.code, 1, res.stdout);
      assert.equal(res.stdout, '');
      assert.equal(
        res.stderr.split('\n')[0],
        `${join(dir, file)}: document 1 (Mapping x) is a gateway record, but this file holds limits in envoyproxy/ratelimit's format only: records go in a YAML file directly in the config folder (services.yaml, ...)`,
      );
    }
  });

  it('warns of a booking catalogue in a records file, and refuses records written in bookings.yaml', async () => {
    const catalogue = readFileSync(join(REPO_ROOT, 'config', 'bookings.yaml'), 'utf8');
    const misplaced = await runCli(['check', folderWith({ 'routes.yaml': MAPPING, 'catalogue.yaml': catalogue })]);
    assert.equal(misplaced.code, 0, misplaced.stderr);
    assert.match(
      warnings(misplaced.stdout).join('\n'),
      /catalogue\.yaml: document 1 \(hotels, cars, hotel_bookings, car_bookings\) looks like the booking catalogue .*: the booking catalogue is read from bookings\.yaml only$/,
    );
    const dir = folderWith({ 'bookings.yaml': MAPPING });
    const records = await runCli(['check', dir]);
    assert.equal(records.code, 1, records.stdout);
    assert.equal(
      records.stderr.split('\n')[0],
      `${join(dir, 'bookings.yaml')}: document 1 (Mapping x) is a gateway record, but this file holds the booking catalogue only: records go in a YAML file directly in the config folder (services.yaml, ...)`,
    );
  });

  it('says why each other entry is ignored, and warns of a document that is nothing it reads', async () => {
    const dir = folderWith({
      'routes.yaml': `${MAPPING}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n---\nreplicas: 3\n`,
      '.env.yaml': 'secret: 1\n',
      'README.txt': 'notes\n',
      'RateLimit.yaml': ENVOY_LIMITS,
      'old.yaml/': '',
      'certs/': '',
      'ratelimit/nested.yaml/': '',
      'ratelimit/notes.txt': 'notes\n',
      'ratelimit/a.yml': ENVOY_LIMITS,
    });
    const res = await runCli(['check', dir]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(
      [...filesSection(res.stdout)],
      [
        ['.env.yaml', ['ignored', 'hidden']],
        ['README.txt', ['ignored', 'not read: neither YAML (*.yaml, *.yml) nor users.htpasswd']],
        ['RateLimit.yaml', ['ignored', 'not read: the name is spelt ratelimit.yaml']],
        ['certs', ['ignored', 'not read: neither YAML (*.yaml, *.yml) nor users.htpasswd']],
        ['old.yaml', ['ignored', 'a folder: only ratelimit/ is read']],
        ['ratelimit/a.yml', ['limits', 'domain mongo_cps: 1 rule']],
        ['ratelimit/nested.yaml', ['ignored', 'a folder: sub-folders of ratelimit/ are not read']],
        ['ratelimit/notes.txt', ['ignored', 'not read: neither YAML (*.yaml, *.yml) nor users.htpasswd']],
        ['routes.yaml', ['records', '1 Mapping; ignored: document 2 (Deployment web), document 3 (keys replicas)']],
      ],
    );
    assert.deepEqual(warnings(res.stdout), [
      `warning: ${join(dir, 'routes.yaml')}: document 3 (keys replicas) is no record, manifest or Emissary resource: ignored`,
    ]);
    assert.match(loadedLine(res.stdout)!, /, 7 entries ignored$/);
  });

  it('reads a file of Emissary resources as such, counting the records they become and those of another ambassador_id', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-check-files-'));
    folders.push(dir);
    cpSync(join(REPO_ROOT, 'config', 'users.htpasswd'), join(dir, 'users.htpasswd'));
    writeFileSync(
      join(dir, 'emissary.yaml'),
      'apiVersion: getambassador.io/v3alpha1\nkind: Mapping\nmetadata: {name: quote}\nspec: {prefix: /quote/, service: 127.0.0.1:9001}\n---\n' +
        'apiVersion: getambassador.io/v3alpha1\nkind: Mapping\nmetadata: {name: blue}\nspec: {prefix: /blue/, service: 127.0.0.1:9002, ambassador_id: [blue]}\n',
    );
    const res = await runCli(['check', dir]);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(filesSection(res.stdout).get('emissary.yaml'), [
      'Emissary resources',
      '1 Mapping; from 1 Emissary resource; 1 record of another ambassador_id',
    ]);
    assert.match(
      loadedLine(res.stdout)!,
      /^Loaded: 1 Mapping, 0 AuthServices, 0 RateLimitServices, from 1 Emissary resource, 1 record left to another ambassador_id, 2 users,/,
    );
  });
});
