import assert from 'node:assert/strict';
import bcrypt from 'bcryptjs';
import { appendFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { changeAndAwait, requestLoop, type LoopRequest, type ReloadLine } from '../../support/reloads';
import { ALICE, basic } from '../../support/credentials';
import { copyConfig, type TempConfig } from '../../support/config-folder';
import { decided } from '../../support/client';
import { startGatehouse, type Running } from '../../support/gatehouse';

const BOB = basic('bob', 'builder');
const EXTRA_MAPPING =
  'apiVersion: gateway/v1\nkind: Mapping\nname: extra\nprefix: /extra/\nservice: api\nrewrite: /v1/\nbypass_auth: true\n';

/** What runs while the config changes: public routes, health, and an authenticated page whose user stays. */
const LOOP: LoopRequest[] = [
  { path: '/v1/messages/1' },
  { path: '/v2/messages/?limit=2' },
  { path: '/gateway/v0/check_ready' },
  { path: '/gateway/v0/diag/?json=true', headers: { Authorization: BOB } },
];

describe('gatehouse config reload', function () {
  let config: TempConfig;
  let running: Running;

  beforeEach(async () => {
    config = copyConfig();
    running = await startGatehouse({ configDir: config.dir, watch: true, reloadDebounceMs: 100 });
  });

  afterEach(async () => {
    await running?.stop();
    config?.remove();
  });

  const status = async (path: string, auth?: string) =>
    (
      await request(running.url)
        .get(path)
        .set(auth ? { Authorization: auth } : {})
    ).status;
  /** The status once it is a decision (see decided): a bcrypt check may be answered busy on a loaded machine. */
  const decidedStatus = async (path: string, auth: string) =>
    (await decided(() => request(running.url).get(path).set({ Authorization: auth }))).status;
  const applied = (check: () => Promise<boolean>) => async (reload: ReloadLine) => reload.applied && (await check());
  const diag = async () =>
    (await request(running.url).get('/gateway/v0/diag/?json=true').set('Authorization', ALICE).expect(200)).body;
  const metric = async (series: string) => {
    const text = (await request(running.url).get('/gateway/v0/metrics').expect(200)).text;
    return Number(
      text
        .split('\n')
        .find((l) => l.startsWith(`${series} `))
        ?.split(' ')[1],
    );
  };

  /** Runs the loop around `during` and checks that none of its requests failed. */
  async function underLoad(during: () => Promise<void>): Promise<void> {
    const loop = requestLoop(running.url, LOOP);
    try {
      await during();
    } finally {
      const { count, failures } = await loop.stop();
      assert.deepEqual(failures, [], `${failures.length} of ${count} requests failed`);
      assert.ok(count > 0);
    }
  }

  it('applies a new Mapping while requests are running, none failing', async () => {
    assert.equal(await status('/extra/messages/1'), 404);
    await underLoad(() =>
      changeAndAwait(
        running.log,
        () => config.write('extra.yaml', EXTRA_MAPPING),
        applied(async () => (await status('/extra/messages/1')) === 200),
      ).then(() => undefined),
    );
    const routes = (await diag()).routes.map((r: { name: string }) => r.name);
    assert.ok(routes.includes('extra'));
    assert.deepEqual((await diag()).config.errors, []);
    // The log says what now serves: how many routes, and the files they came from.
    const line = running.log.lines.filter((l) => l.msg === 'config reloaded').at(-1)!;
    assert.equal(line.routes, routes.length);
    assert.ok((line.sources as string[]).includes(join(config.dir, 'extra.yaml')), JSON.stringify(line.sources));
  });

  it('applies new limits while requests are running', async () => {
    const policy = async (value: string) =>
      (
        await request(running.url)
          .get('/v1/hotels')
          .set('Authorization', ALICE)
          .set('X-Gateway-Test-Allow', value)
          .expect(200)
      ).headers['ratelimit-policy'];
    assert.equal(await policy('before'), '"test-allow";q=3;w=60');
    let n = 0;
    await underLoad(() =>
      changeAndAwait(
        running.log,
        () =>
          config.write(
            'ratelimit.yaml',
            config.read('ratelimit.yaml').replace('requests_per_unit: 3', 'requests_per_unit: 7'),
          ),
        applied(async () => (await policy(`after-${n++}`)) === '"test-allow";q=7;w=60'),
      ).then(() => undefined),
    );
  });

  it('applies a new users file while requests are running: a new user gets in, a changed password is asked again', async () => {
    assert.equal(await status('/v1/hotels', ALICE), 200);
    // Verified once: from now on alice's credentials are cached.
    assert.equal(await status('/v1/hotels', ALICE), 200);
    const bobLine = config
      .read('users.htpasswd')
      .split('\n')
      .find((l) => l.startsWith('bob:'))!;
    const users = [
      `alice:${bcrypt.hashSync('looking-glass', 4)}`,
      bobLine,
      `carol:${bcrypt.hashSync('chess', 4)}`,
      '',
    ].join('\n');
    await underLoad(() =>
      changeAndAwait(
        running.log,
        () => config.write('users.htpasswd', users),
        applied(async () => (await decidedStatus('/v1/hotels', basic('carol', 'chess'))) === 200),
      ).then(() => undefined),
    );
    assert.equal(await decidedStatus('/v1/hotels', ALICE), 401, 'the cached credentials were dropped');
    assert.equal(await decidedStatus('/v1/hotels', basic('alice', 'looking-glass')), 200);
  });

  const invalid: [string, (c: TempConfig) => void, RegExp][] = [
    [
      'bad YAML',
      (c) => c.write('services.yaml', `${c.read('services.yaml')}\n---\nkind: Mapping\nname: [unclosed\n`),
      /services\.yaml: YAML: /,
    ],
    [
      'an unknown kind',
      (c) => c.write('extra.yaml', EXTRA_MAPPING.replace('kind: Mapping', 'kind: Mappin')),
      /extra\.yaml: record extra: kind: unknown kind 'Mappin'/,
    ],
    [
      'a service one letter off a module',
      (c) => c.write('extra.yaml', EXTRA_MAPPING.replace('service: api', 'service: hotel-bookings')),
      /Mapping extra: service: 'hotel-bookings' is no module: did you mean 'hotel-booking'/,
    ],
    [
      'bad limits',
      (c) => c.write('ratelimit.yaml', c.read('ratelimit.yaml').replace('unit: minute', 'unit: fortnight')),
      /ratelimit\.yaml: descriptors\[0\]\.rate_limit\.unit/,
    ],
    [
      'a plaintext password',
      (c) => c.write('users.htpasswd', `${c.read('users.htpasswd')}mallory:open-sesame\n`),
      /users\.htpasswd: line 4: user 'mallory': the password is not hashed/,
    ],
    [
      'a users file caught emptied, as while it is written over',
      (c) => writeFileSync(join(c.dir, 'users.htpasswd'), ''),
      /users\.htpasswd: the file is empty/,
    ],
    [
      'a bookings.yaml caught emptied',
      (c) => writeFileSync(join(c.dir, 'bookings.yaml'), ''),
      /bookings\.yaml: holds no YAML document/,
    ],
  ];
  for (const [what, breakIt, expected] of invalid) {
    it(`refuses ${what}: logged, shown in diag, counted, and the last good config keeps serving`, async () => {
      const failures = await metric('gatehouse_config_reloads_total{result="failure"}');
      const refused = await changeAndAwait(
        running.log,
        () => breakIt(config),
        (r) => !r.applied,
      );
      assert.ok(
        refused.problems.some((p) => expected.test(p)),
        refused.problems.join('\n'),
      );
      assert.ok(!running.log.raw.some((line) => line.includes('open-sesame')), 'a password is never logged');

      const shown = await diag();
      assert.ok(
        shown.config.errors.some((e: string) => expected.test(e)),
        shown.config.errors.join('\n'),
      );
      assert.ok(!JSON.stringify(shown).includes('open-sesame'));
      assert.equal(await metric('gatehouse_config_reloads_total{result="failure"}'), failures + 1);
      assert.equal(await status('/v1/messages/1'), 200);
      assert.equal(await status('/v1/hotels', ALICE), 200);
      assert.equal(await status('/extra/messages/1'), 404);
      assert.equal(await status('/v1/hotels', basic('mallory', 'open-sesame')), 401);
      const limits = await request(running.url)
        .get('/v1/hotels')
        .set('Authorization', ALICE)
        .set('X-Gateway-Test-Allow', what);
      assert.equal(limits.headers['ratelimit-policy'], '"test-allow";q=3;w=60');

      // Put right, the next reload is applied and the errors are gone.
      const pristine = copyConfig();
      try {
        await changeAndAwait(
          running.log,
          () => {
            for (const name of ['services.yaml', 'ratelimit.yaml', 'users.htpasswd', 'bookings.yaml'])
              config.write(name, pristine.read(name));
            config.write('extra.yaml', EXTRA_MAPPING);
          },
          applied(async () => (await status('/extra/messages/1')) === 200),
        );
      } finally {
        pristine.remove();
      }
      assert.deepEqual((await diag()).config.errors, []);
    });
  }

  it('keeps seeing a file replaced again and again, and the files of a ratelimit/ folder that appears', async () => {
    const limits = config.read('ratelimit.yaml');
    const policy = async (value: string) =>
      (
        await request(running.url)
          .get('/v1/hotels')
          .set('Authorization', ALICE)
          .set('X-Gateway-Test-Allow', value)
          .expect(200)
      ).headers['ratelimit-policy'];
    let n = 0;
    const quota = (q: number) => applied(async () => (await policy(`v${n++}`)) === `"test-allow";q=${q};w=60`);
    for (const q of [4, 5, 6]) {
      await changeAndAwait(
        running.log,
        () => config.write('ratelimit.yaml', limits.replace('requests_per_unit: 3', `requests_per_unit: ${q}`)),
        quota(q),
      );
    }
    // The same limits moved into ratelimit/, then changed there.
    await changeAndAwait(
      running.log,
      () => {
        config.write('ratelimit/gateway.yaml', limits.replace('requests_per_unit: 3', 'requests_per_unit: 8'));
        config.unlink('ratelimit.yaml');
      },
      quota(8),
    );
    await changeAndAwait(
      running.log,
      () => config.write('ratelimit/gateway.yaml', limits.replace('requests_per_unit: 3', 'requests_per_unit: 9')),
      quota(9),
    );
  });

  it('applies no half-written services.yaml: truncated, or with only its heading comments, it is refused until the write is whole', async () => {
    const whole = config.read('services.yaml');
    const heading = whole.slice(0, whole.indexOf('\n---\n') + 1);
    assert.match(heading, /^# /);
    for (const part of ['', heading]) {
      const refused = await changeAndAwait(
        running.log,
        () => writeFileSync(join(config.dir, 'services.yaml'), part),
        (r) => !r.applied,
      );
      assert.ok(
        refused.problems.some((p) => /services\.yaml: holds no YAML document/.test(p)),
        refused.problems.join('\n'),
      );
      assert.equal(await status('/v1/messages/1'), 200);
      assert.equal(await status('/v1/hotels', ALICE), 200);
    }
    await changeAndAwait(
      running.log,
      () => appendFileSync(join(config.dir, 'services.yaml'), whole.slice(heading.length)),
      (r) => r.applied,
    );
    assert.deepEqual((await diag()).config.errors, []);
    assert.equal(await status('/v1/messages/1'), 200);
  });

  it('applies nothing of a folder with any bad file: a new Mapping waits for the users file to be put right', async () => {
    const good = config.read('users.htpasswd');
    await changeAndAwait(
      running.log,
      () => config.write('users.htpasswd', `${good}mallory:open-sesame\n`),
      (r) => !r.applied,
    );
    const refused = await changeAndAwait(
      running.log,
      () => config.write('extra.yaml', EXTRA_MAPPING),
      (r) => !r.applied,
    );
    assert.ok(refused.problems.some((p) => /users\.htpasswd: line 4/.test(p)));
    assert.equal(await status('/extra/messages/1'), 404, 'the valid Mapping was not applied alone');
    assert.ok((await diag()).config.errors.length > 0);
    await changeAndAwait(
      running.log,
      () => config.write('users.htpasswd', good),
      applied(async () => (await status('/extra/messages/1')) === 200),
    );
    assert.deepEqual((await diag()).config.errors, []);
  });
  it('warns, rather than notes, a reload that leaves no route: its record files removed, every request is a 404', async () => {
    const records = readdirSync(config.dir).filter(
      (f) => /\.ya?ml$/.test(f) && f !== 'ratelimit.yaml' && f !== 'bookings.yaml',
    );
    const kept = records.map((f) => [f, config.read(f)] as const);
    const emptied = await changeAndAwait(
      running.log,
      () => records.forEach((f) => config.unlink(f)),
      (r) => r.applied,
    );
    const line = running.log.lines[emptied.index - 1];
    assert.equal(line.level, 40);
    assert.equal(line.routes, 0);
    assert.equal(await status('/v1/messages/1'), 404);
    await changeAndAwait(
      running.log,
      () => kept.forEach(([f, text]) => config.write(f, text)),
      applied(async () => (await status('/v1/messages/1')) === 200),
    );
  });
});
