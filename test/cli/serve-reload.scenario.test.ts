import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { rateLimitProtos } from '../../src/ratelimit/grpc/protos';
import { basic, quickHash } from '../support/credentials';
import { eventually } from '../support/polling';
import { aliasBomb } from '../support/hostile-yaml';
import { killAll, REPO_ROOT, startCli, type CliServer } from '../support/process';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

/** Replaces a file as editors and `htpasswd` do: written aside, renamed over it. */
function replace(dir: string, name: string, text: string): void {
  const aside = join(dir, `.${name}.tmp`);
  writeFileSync(aside, text);
  renameSync(aside, join(dir, name));
}

function limits(requestsPerUnit: number): string {
  return `domain: edge\ndescriptors:\n  - key: client\n    rate_limit:\n      unit: minute\n      requests_per_unit: ${requestsPerUnit}\n`;
}

describe('gatehouse serve, when its files change', function () {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-serve-reload-'));
  });
  afterEach(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the auth service checks against the new users file', async () => {
    writeFileSync(join(dir, 'users.htpasswd'), `carol:${quickHash('first')}\ndave:${quickHash('gone-soon')}\n`);
    const auth: CliServer = await startCli(['serve', 'auth', '--port', '0', '--config', dir], {
      env: { LOG_LEVEL: 'warn' },
    });
    const status = async (user: string, password: string) =>
      (await fetch(`${auth.address}/check`, { headers: { authorization: basic(user, password) } })).status;
    assert.equal(await status('carol', 'first'), 200);
    assert.equal(await status('dave', 'gone-soon'), 200);

    replace(dir, 'users.htpasswd', `carol:${quickHash('second')}\n`);
    await eventually(
      async () => ((await status('carol', 'second')) === 200 ? true : undefined),
      'the new password to be accepted',
    );
    assert.equal(await status('carol', 'first'), 401, 'the old password, verified a moment ago, is no longer accepted');
    assert.equal(await status('dave', 'gone-soon'), 401, 'a removed user is refused');
  });

  it('the auth service reads its users file again on SIGHUP, and lives on, when it does not watch the folder', async () => {
    writeFileSync(join(dir, 'users.htpasswd'), `carol:${quickHash('first')}\n`);
    const auth: CliServer = await startCli(['serve', 'auth', '--port', '0', '--config', dir, '--no-watch'], {
      env: { LOG_LEVEL: 'info' },
    });
    const status = async (user: string, password: string) =>
      (await fetch(`${auth.address}/check`, { headers: { authorization: basic(user, password) } })).status;
    assert.equal(await status('carol', 'first'), 200);
    replace(dir, 'users.htpasswd', `carol:${quickHash('second')}\n`);
    auth.child.kill('SIGHUP');
    await eventually(
      async () => (auth.output().stdout.includes('files reloaded') ? true : undefined),
      'the reload to be logged',
    );
    assert.equal(await status('carol', 'second'), 200);
    assert.equal(await status('carol', 'first'), 401);
    assert.equal(auth.child.exitCode, null, 'still running');
  });

  it('the auth service follows its config folder to the release a repointed link names', async () => {
    for (const [release, password] of [
      ['1', 'first'],
      ['2', 'second'],
    ]) {
      mkdirSync(join(dir, 'releases', release), { recursive: true });
      writeFileSync(join(dir, 'releases', release, 'users.htpasswd'), `carol:${quickHash(password)}\n`);
    }
    symlinkSync(join('releases', '1'), join(dir, 'current'));
    const auth: CliServer = await startCli(['serve', 'auth', '--port', '0', '--config', join(dir, 'current')], {
      env: { LOG_LEVEL: 'warn' },
    });
    const status = async (password: string) =>
      (await fetch(`${auth.address}/check`, { headers: { authorization: basic('carol', password) } })).status;
    assert.equal(await status('first'), 200);

    // As a deployment does: a new link, renamed over the old one.
    symlinkSync(join('releases', '2'), join(dir, 'current.new'));
    renameSync(join(dir, 'current.new'), join(dir, 'current'));
    await eventually(async () => ((await status('second')) === 200 ? true : undefined), 'the new release to be served');
    assert.equal(await status('first'), 401, 'the previous release is no longer served');
  });

  it('the rate-limit service answers with the new limits, and keeps them when a broken file follows', async () => {
    writeFileSync(join(dir, 'ratelimit.yaml'), limits(3));
    const server: CliServer = await startCli(['serve', 'ratelimit', '--port', '0', '--config', dir], {
      env: { LOG_LEVEL: 'info' },
    });
    const pkg = grpc.loadPackageDefinition(rateLimitProtos()) as Any;
    const client = new pkg.envoy.service.ratelimit.v3.RateLimitService(
      server.address,
      grpc.credentials.createInsecure(),
    );
    const limitNow = async (): Promise<number> => {
      const res: Any = await new Promise((resolve, reject) =>
        client.ShouldRateLimit(
          { domain: 'edge', descriptors: [{ entries: [{ key: 'client', value: 'c1' }] }] },
          (err: Error | null, r: Any) => (err ? reject(err) : resolve(r)),
        ),
      );
      return res.statuses[0].current_limit.requests_per_unit;
    };
    try {
      assert.equal(await limitNow(), 3);
      replace(dir, 'ratelimit.yaml', limits(150));
      await eventually(async () => ((await limitNow()) === 150 ? true : undefined), 'the new limit to be served');

      replace(
        dir,
        'ratelimit.yaml',
        'domain: edge\ndescriptors:\n  - key: client\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n',
      );
      await eventually(
        async () => (/rate limits refused/.test(server.output().stdout + server.output().stderr) ? true : undefined),
        'the refusal to be logged',
      );
      assert.equal(await limitNow(), 150, 'the previous limits stay');
    } finally {
      client.close();
    }
  });

  it('a booking service lives on when an alias bomb is dropped into its data file: refused by name, the catalogue kept', async () => {
    writeFileSync(join(dir, 'bookings.yaml'), readFileSync(join(REPO_ROOT, 'config', 'bookings.yaml'), 'utf8'));
    const server: CliServer = await startCli(['serve', 'hotel-booking', '--port', '0', '--config', dir], {
      env: { LOG_LEVEL: 'info' },
    });
    const hotels = async () =>
      ((await (await fetch(`${server.address}/v1/hotels/`)).json()) as { items: unknown[] }).items.length;
    const before = await hotels();
    assert.ok(before > 0);
    replace(dir, 'bookings.yaml', `${aliasBomb('extra')}hotels: []\n`);
    const refused = /"msg":"booking data refused; the previous catalogue stays"/;
    await eventually(async () => (refused.test(server.output().stdout) ? true : undefined), 'the refusal to be logged');
    assert.match(server.output().stdout, /bookings\.yaml: uses aliases more than 100 times: refused/);
    assert.equal(server.child.exitCode, null, 'the process is still running');
    assert.equal(await hotels(), before);
  });
});
