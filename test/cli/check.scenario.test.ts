import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { aliasBomb } from '../support/hostile-yaml';
import { killAll, REPO_ROOT, runCli, type CliResult } from '../support/process';

const folders: string[] = [];

/** A copy of the demo config folder with `text` replaced by `by` in `file`. */
function demoWith(file: string, text: string, by: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-check-'));
  folders.push(dir);
  cpSync(join(REPO_ROOT, 'config'), dir, { recursive: true });
  const path = join(dir, file);
  const before = readFileSync(path, 'utf8');
  assert.ok(before.includes(text), `${file} of the demo holds '${text}'`);
  writeFileSync(path, before.replace(text, by));
  return dir;
}

/** The route table's rows: the cells of each line after the header. */
function routeRows(stdout: string): string[][] {
  const lines = stdout.split('\n');
  const header = lines.findIndex((l) => l.startsWith('PRECEDENCE'));
  assert.ok(header >= 0, stdout);
  const rows: string[][] = [];
  for (const line of lines.slice(header + 1)) {
    if (!line.trim()) break;
    rows.push(line.trim().split(/\s+/));
  }
  return rows;
}

/** An open Mapping of /v1/ to the api module, with `extra` fields. */
const mapping = (name: string, extra: string) =>
  `apiVersion: gateway/v1\nkind: Mapping\nname: ${name}\nprefix: /v1/\nservice: api\nbypass_auth: true\n${extra}`;

describe('gatehouse check', function () {
  after(async () => {
    await killAll();
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  });

  describe('of the demo config', () => {
    let res: CliResult;
    before(async () => {
      res = await runCli(['check', 'config']);
    });

    it('exits 0 and says the folder is OK', () => {
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout.split('\n')[0], `${join(REPO_ROOT, 'config')}: OK`);
      assert.equal(res.stderr, '');
    });

    it('prints the route table in match order: the hotel and car routes before /v1/', () => {
      const rows = routeRows(res.stdout);
      const prefixes = rows.map((r) => r[1]);
      for (const prefix of ['/v1/hotels', '/v1/cars', '/v1', '/v2'])
        assert.ok(prefixes.includes(prefix), `${prefix} in ${prefixes.join(' ')}`);
      assert.ok(
        prefixes.some((p) => p.startsWith('/gateway/v0/diag')),
        prefixes.join(' '),
      );
      assert.ok(prefixes.indexOf('/v1/hotels') < prefixes.indexOf('/v1'), prefixes.join(' '));
      assert.ok(prefixes.indexOf('/v1/cars') < prefixes.indexOf('/v1'), prefixes.join(' '));
      const hotels = rows.find((r) => r[1] === '/v1/hotels')!;
      assert.deepEqual(hotels.slice(2), [
        '*',
        '-',
        '*',
        'hotel-booking',
        'in-process',
        '""',
        'required',
        'gateway:2',
        'hotels-mapping',
      ]);
      const v1 = rows.find((r) => r[1] === '/v1')!;
      assert.equal(v1[8], 'bypass');
    });

    it('names the auth and rate-limit services the routes use', () => {
      assert.match(res.stdout, /^auth: authentication -> auth$/m);
      assert.match(res.stdout, /^rate limits: ratelimit -> ratelimit \(domain gateway\)$/m);
    });
  });

  it('reads GATEHOUSE_CONFIG when no folder is given', async () => {
    const dir = demoWith('services.yaml', 'prefix: /v1/cars', 'prefix: /v1/automobiles');
    const res = await runCli(['check'], { env: { GATEHOUSE_CONFIG: dir } });
    assert.equal(res.code, 0, res.stderr);
    assert.ok(res.stdout.startsWith(`${dir}: OK`), res.stdout);
    assert.ok(routeRows(res.stdout).some((r) => r[1] === '/v1/automobiles'));
  });

  it('takes the folder as --config, as start does, over GATEHOUSE_CONFIG, and refuses it given twice', async () => {
    const dir = demoWith('services.yaml', 'prefix: /v1/cars', 'prefix: /v1/wagons');
    const res = await runCli(['check', '--config', dir], { env: { GATEHOUSE_CONFIG: join(REPO_ROOT, 'config') } });
    assert.equal(res.code, 0, res.stderr);
    assert.ok(res.stdout.startsWith(`${dir}: OK`), res.stdout);
    assert.ok(routeRows(res.stdout).some((r) => r[1] === '/v1/wagons'));
    const twice = await runCli(['check', dir, '--config', dir]);
    assert.deepEqual([twice.code, twice.stdout], [2, '']);
    assert.match(twice.stderr, /give check its folder once: as \[dir\] or as --config <dir>/);
  });

  describe('of a folder with a mistake exits 1 and names where it is', () => {
    // Each case is a copy of the demo with one mistake; they run side by side.
    const cases: { name: string; file: string; text: string; by: string; expect: RegExp[] }[] = [
      {
        name: 'YAML that does not parse',
        file: 'services.yaml',
        text: '      prefix: /v1/cars\n',
        by: '      prefix: [/v1/cars\n',
        expect: [/services\.yaml: service cars: (annotation gatehouse\.io\/config: )?YAML: .*line \d+/],
      },
      {
        name: 'a record of an unknown kind',
        file: 'services.yaml',
        text: 'kind: Mapping\n      name: cars-mapping',
        by: 'kind: Mappin\n      name: cars-mapping',
        expect: [/services\.yaml: service cars: record cars-mapping: kind: unknown kind 'Mappin'/],
      },
      {
        name: 'a field of the wrong type',
        file: 'services.yaml',
        text: 'prefix: /v1/cars\n',
        by: 'prefix: /v1/cars\n      timeout_ms: soon\n',
        expect: [/services\.yaml: service cars: Mapping cars-mapping: timeout_ms: expected number/],
      },
      {
        name: 'a service one letter off a module',
        file: 'services.yaml',
        text: 'service: car-booking',
        by: 'service: car-bookings',
        expect: [
          /services\.yaml: service cars: Mapping cars-mapping: service: 'car-bookings' is no module: did you mean 'car-booking'\?/,
        ],
      },
      {
        name: 'an auth service that names nothing',
        file: 'services.yaml',
        text: 'auth_service: auth',
        by: 'auth_service: authn',
        expect: [/services\.yaml: service auth: AuthService authentication: .*auth_service:? '?authn'? is neither/],
      },
      {
        name: 'a plaintext password in users.htpasswd',
        file: 'users.htpasswd',
        text: 'bob:$2y$10$5OzqpTDMyi6DunZuSR0eCuyJpX14V2N7z.Np42U2e7QDLY5RvUPEO',
        by: 'bob:builder',
        expect: [/users\.htpasswd: line 3: user 'bob': the password is not hashed/],
      },
      {
        name: 'a limit that is not a number in ratelimit.yaml',
        file: 'ratelimit.yaml',
        text: 'requests_per_unit: 3',
        by: 'requests_per_unit: three',
        expect: [/ratelimit\.yaml: descriptors\[0\]\.rate_limit\.requests_per_unit: must be a whole number/],
      },
      {
        name: 'an unknown unit in ratelimit.yaml',
        file: 'ratelimit.yaml',
        text: 'unit: minute',
        by: 'unit: fortnight',
        expect: [/ratelimit\.yaml: descriptors\[0\]\.rate_limit\.unit: /],
      },
      {
        name: 'an alias bomb in services.yaml',
        file: 'services.yaml',
        text: '\n---\n',
        by: `\n---\n${aliasBomb()}---\n`,
        expect: [/services\.yaml: YAML: (document \d+: )?uses aliases more than 100 times: refused/],
      },
      {
        name: 'an alias bomb in bookings.yaml',
        file: 'bookings.yaml',
        text: '\nhotels:\n',
        by: `\n${aliasBomb('extra')}hotels:\n`,
        expect: [/bookings\.yaml: uses aliases more than 100 times: refused/],
      },
      {
        name: 'a booking id that is not a UUID',
        file: 'bookings.yaml',
        text: 'id: b0db9db1-e959-46d6-b29b-0696485cc76a',
        by: 'id: first',
        expect: [/bookings\.yaml: hotel_bookings\[0\]\.id: must be a UUID/],
      },
    ];
    const results = new Map<string, Promise<{ dir: string; res: CliResult }>>();
    before(async () => {
      for (const c of cases) {
        const dir = demoWith(c.file, c.text, c.by);
        results.set(
          c.name,
          runCli(['check', dir]).then((res) => ({ dir, res })),
        );
      }
      await Promise.all(results.values());
    });

    for (const c of cases) {
      it(c.name, async () => {
        const { dir, res } = await results.get(c.name)!;
        assert.equal(res.code, 1, res.stdout);
        assert.equal(res.stdout, '');
        assert.ok(res.stderr.startsWith(join(dir, c.file)) || res.stderr.includes(`${c.file}:`), res.stderr);
        for (const pattern of c.expect) assert.match(res.stderr, pattern);
        assert.doesNotMatch(res.stderr, /^\s+at /m, 'no stack trace');
        assert.doesNotMatch(res.stderr, /builder/, 'no password echoed');
      });
    }
  });

  it('refuses a file larger than --file-size-limit (or GATEHOUSE_FILE_SIZE_LIMIT), naming it, as start would', async () => {
    const dir = demoWith('users.htpasswd', 'alice:', 'alice:');
    const [flag, env, malformed] = await Promise.all([
      runCli(['check', dir, '--file-size-limit', '3k']),
      runCli(['check', dir], { env: { GATEHOUSE_FILE_SIZE_LIMIT: '3k' } }),
      runCli(['check', dir, '--file-size-limit', 'lots']),
    ]);
    for (const res of [flag, env]) {
      assert.equal(res.code, 1, res.stdout);
      assert.equal(
        res.stderr.trim(),
        `${join(dir, 'services.yaml')}: is larger than the file size limit of 3 KiB (3.342 KiB): refused; raise fileSizeLimit (GATEHOUSE_FILE_SIZE_LIMIT) if it is meant to be that large`,
      );
    }
    assert.equal(malformed.code, 2);
    assert.match(
      malformed.stderr,
      /^gatehouse: --file-size-limit: must be a number of bytes of 1 or more \(512k, 16m, 1g\) \(got "lots"\)\n/,
    );
  });

  it('reports every problem of a folder at once, not only the first', async () => {
    const dir = demoWith('services.yaml', 'prefix: /v1/cars\n', 'prefix: /v1/cars\n      precedence: high\n');
    const text = readFileSync(join(dir, 'services.yaml'), 'utf8');
    writeFileSync(
      join(dir, 'services.yaml'),
      text.replace('prefix: /v1/hotels\n', 'prefix: /v1/hotels\n      bypass_auth: maybe\n'),
    );
    const res = await runCli(['check', dir]);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /service cars: Mapping cars-mapping: precedence: /);
    assert.match(res.stderr, /service hotels: Mapping hotels-mapping: bypass_auth: /);
  });

  it('reports the problems of the records, the users, the limits and the booking data in one run', async () => {
    const dir = demoWith('services.yaml', 'prefix: /v1/cars\n', 'prefix: /v1/cars\n      precedence: high\n');
    const edit = (file: string, text: string, by: string) => {
      const before = readFileSync(join(dir, file), 'utf8');
      assert.ok(before.includes(text), `${file} holds '${text}'`);
      writeFileSync(join(dir, file), before.replace(text, by));
    };
    edit('users.htpasswd', 'bob:$2y$10$5OzqpTDMyi6DunZuSR0eCuyJpX14V2N7z.Np42U2e7QDLY5RvUPEO', 'bob:builder');
    edit('ratelimit.yaml', 'unit: minute', 'unit: fortnight');
    edit('bookings.yaml', 'id: b0db9db1-e959-46d6-b29b-0696485cc76a', 'id: first');
    const res = await runCli(['check', dir]);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /service cars: Mapping cars-mapping: precedence: /);
    assert.match(res.stderr, /users\.htpasswd: line 3: user 'bob': the password is not hashed/);
    assert.match(res.stderr, /ratelimit\.yaml: descriptors\[0\]\.rate_limit\.unit: /);
    assert.match(res.stderr, /bookings\.yaml: hotel_bookings\[0\]\.id: must be a UUID/);
    assert.doesNotMatch(res.stderr, /builder/, 'no password echoed');

    // gatehouse start refuses the folder with the same report.
    const start = await runCli(['start'], { env: { GATEHOUSE_CONFIG: dir, PORT: '0', GRPC_PORT: '0' } });
    assert.equal(start.code, 1);
    for (const pattern of [
      /precedence: /,
      /users\.htpasswd: line 3/,
      /ratelimit\.yaml: descriptors\[0\]/,
      /bookings\.yaml: hotel_bookings\[0\]/,
    ]) {
      assert.match(start.stderr + start.stdout, pattern);
    }
  });

  it('warns of a users file that names no user', async () => {
    const dir = demoWith('users.htpasswd', 'alice:', '# alice:');
    writeFileSync(join(dir, 'users.htpasswd'), '# nobody yet\n');
    const res = await runCli(['check', dir]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^warning: .*users\.htpasswd: names no user/m);
  });

  it('prints what loads with a warning: a weak hash in the users file, a limits key with no effect', async () => {
    const dir = demoWith(
      'ratelimit.yaml',
      '      requests_per_unit: 3\n',
      '      requests_per_unit: 3\n    detailed_metric: true\n',
    );
    // An SHA-1 line, as `htpasswd -s` writes it (password "secret").
    writeFileSync(
      join(dir, 'users.htpasswd'),
      `${readFileSync(join(dir, 'users.htpasswd'), 'utf8')}carol:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=\n`,
    );
    const res = await runCli(['check', dir]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /: OK\n/);
    const warnings = res.stdout.split('\n').filter((l) => l.startsWith('warning: '));
    assert.equal(warnings.length, 2, res.stdout);
    assert.match(warnings[0], /users\.htpasswd: line \d+: user 'carol': .*SHA-1/);
    assert.match(warnings[1], /ratelimit\.yaml: .*detailed_metric/);
  });

  it('tells apart routes on one prefix that differ only by the headers or the method they require', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-check-'));
    folders.push(dir);
    writeFileSync(
      join(dir, 'services.yaml'),
      [
        mapping('plain', ''),
        mapping('canary', 'headers:\n  x-canary: "yes"\n'),
        mapping('debug', 'headers:\n  x-debug: true\n  x-tenant: acme\n'),
        mapping('posts', 'method: POST\n'),
      ].join('---\n'),
    );
    const res = await runCli(['check', dir]);
    assert.equal(res.code, 0, res.stderr);
    const header = res.stdout
      .split('\n')
      .find((l) => l.startsWith('PRECEDENCE'))!
      .trim()
      .split(/\s+/);
    assert.deepEqual(header.slice(0, 4), ['PRECEDENCE', 'PREFIX', 'METHOD', 'HEADERS']);
    const rows = routeRows(res.stdout).map((r) => [r[2], r[3], r[r.length - 1]]);
    // Match order: the more constrained first, then the order of the folder.
    assert.deepEqual(rows, [
      ['*', 'x-debug,x-tenant="acme"', 'debug'],
      ['*', 'x-canary="yes"', 'canary'],
      ['POST', '-', 'posts'],
      ['*', '-', 'plain'],
    ]);
  });

  it('shows the host each route applies to, a prefix matched in any case or with unsafe escapes, the Host a remote upstream is sent, the upgrades it tunnels, and its cluster and upstream fields', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-check-'));
    folders.push(dir);
    writeFileSync(
      join(dir, 'services.yaml'),
      [
        mapping('quickstart', 'hostname: "*"\n'),
        mapping('tenants', 'hostname: "*.Example.com"\n'),
        mapping('legacy', 'host: Quote.example.com\ncase_sensitive: false\n'),
        'apiVersion: gateway/v1\nkind: Mapping\nname: httpbin\nprefix: /httpbin/\nservice: 127.0.0.1:9\nbypass_auth: true\nhost_rewrite: httpbin.org\n',
        'apiVersion: gateway/v1\nkind: Mapping\nname: chat\nprefix: /chat/\nservice: 127.0.0.1:9\nallow_upgrade: [websocket]\n',
        'apiVersion: gateway/v1\nkind: Mapping\nname: files\nprefix: /files/\nservice: 127.0.0.1:9\nallow_unsafe_path_escapes: true\n',
        'apiVersion: gateway/v1\nkind: Mapping\nname: quotes\nprefix: /quotes/\nservice: quote\nnamespace: shop\n' +
          'retry_policy: {retry_on: 5xx, num_retries: 2, per_try_timeout: 1s}\ncircuit_breakers: [{max_connections: 10}]\n' +
          'load_balancer: {policy: least_request}\nconnect_timeout_ms: 500\n',
      ].join('---\n'),
    );
    const res = await runCli(['check', dir]);
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout.split('\n');
    const header = lines
      .find((l) => l.startsWith('PRECEDENCE'))!
      .trim()
      .split(/\s+/);
    assert.deepEqual(header.slice(0, 6), ['PRECEDENCE', 'PREFIX', 'METHOD', 'HEADERS', 'HOST', 'SERVICE']);
    const line = (name: string) => lines.find((l) => l.endsWith(` ${name}`))!;
    assert.match(line('legacy'), /^0\s+\/v1\/ \(any case\)\s+\*\s+-\s+quote\.example\.com\s+api\s/);
    assert.match(line('tenants'), /^0\s+\/v1\/\s+\*\s+-\s+\*\.example\.com\s+api\s/);
    assert.match(line('quickstart'), /^0\s+\/v1\/\s+\*\s+-\s+\*\s+api\s/);
    assert.match(
      line('httpbin'),
      /^0\s+\/httpbin\/\s+\*\s+-\s+\*\s+127\.0\.0\.1:9 \(Host: httpbin\.org\) -> cluster_127_0_0_1_9\s+remote\s/,
    );
    assert.match(
      line('chat'),
      /^0\s+\/chat\/\s+\*\s+-\s+\*\s+127\.0\.0\.1:9 \(upgrades: websocket\) -> cluster_127_0_0_1_9\s+remote\s/,
    );
    assert.match(
      line('files'),
      /^0\s+\/files\/ \(unsafe escapes\)\s+\*\s+-\s+\*\s+127\.0\.0\.1:9 -> cluster_127_0_0_1_9\s+remote\s/,
    );
    assert.ok(
      line('quotes').includes(
        'quote -> cluster_quote_shop (namespace shop; retry 5xx x2 (per try 1s); breakers default max_connections=10; lb least_request; connect 500ms)  remote',
      ),
      line('quotes'),
    );
    // A route with a hostname is tried before the one without on the same prefix.
    assert.ok(lines.indexOf(line('tenants')) < lines.indexOf(line('quickstart')));
  });

  it('says so when a folder holds no routes at all', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-check-'));
    folders.push(dir);
    const res = await runCli(['check', dir]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(
      res.stdout,
      `${dir}: OK\n\nFiles: none: the folder is empty\n\n` +
        'Loaded: 0 Mappings, 0 AuthServices, 0 RateLimitServices, no users file, ' +
        'no limits (no ratelimit.yaml, no ratelimit/), no bookings catalogue\n\n' +
        "no Mapping records: every path but the gateway's own (/gateway/v0/check_alive, ...) answers 404\n",
    );
  });

  it('shows the control characters of a config, an ESC sequence in a Mapping name among them, as escapes, never raw to the terminal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-check-'));
    folders.push(dir);
    writeFileSync(
      join(dir, 'routes.yaml'),
      'apiVersion: gateway/v1\nkind: Mapping\nname: "evil\\e[2J\\e]0;owned\\a"\nprefix: /evil/\nservice: 127.0.0.1:9\n',
    );
    const res = await runCli(['check', dir]);
    assert.equal(res.code, 0, res.stderr);
    assert.ok(
      !/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(res.stdout),
      'no control character reaches the terminal',
    );
    assert.ok(res.stdout.includes('evil\\u001b[2J\\u001b]0;owned\\u0007'), res.stdout);
  });

  it('keeps each route on one line of the table, a line break or tab in a Mapping name shown as an escape', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-check-'));
    folders.push(dir);
    writeFileSync(
      join(dir, 'routes.yaml'),
      'apiVersion: gateway/v1\nkind: Mapping\nname: "two\\nlines\\tand a tab"\nprefix: /two/\nservice: 127.0.0.1:9\n',
    );
    const res = await runCli(['check', dir]);
    assert.equal(res.code, 0, res.stderr);
    const row = res.stdout.split('\n').find((line) => line.includes('/two/'));
    assert.ok(row?.endsWith('two\\nlines\\tand a tab'), res.stdout);
  });

  it('exits 1 for a folder that does not exist', async () => {
    const res = await runCli(['check', join(tmpdir(), 'gatehouse-no-such-folder')]);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /gatehouse-no-such-folder: cannot read the config folder/);
  });
});
