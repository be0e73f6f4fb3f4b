import assert from 'node:assert/strict';
import bcrypt from 'bcryptjs';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { publishAsKubernetes } from '../../support/kubernetes-volume';
import { changeAndAwait, type ReloadLine } from '../../support/reloads';
import { ALICE, basic } from '../../support/credentials';
import { DEMO_CONFIG } from '../../support/config-folder';
import { startGatehouse, type Running } from '../../support/gatehouse';

const EXTRA_MAPPING =
  'apiVersion: gateway/v1\nkind: Mapping\nname: extra\nprefix: /extra/\nservice: api\nrewrite: /v1/\nbypass_auth: true\n';

/** The demo config's files by name, to publish as a volume. */
function demoFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(DEMO_CONFIG)) files[name] = readFileSync(join(DEMO_CONFIG, name), 'utf8');
  return files;
}

describe('gatehouse config reload of a folder as deployments lay it out', function () {
  let root: string;
  let running: Running | undefined;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'gatehouse-deployed-'));
  });
  afterEach(async () => {
    await running?.stop();
    running = undefined;
    rmSync(root, { recursive: true, force: true });
  });

  const start = async (dir: string) =>
    (running = await startGatehouse({ configDir: dir, watch: true, reloadDebounceMs: 100 }));
  const status = async (path: string, auth?: string) =>
    (
      await request(running!.url)
        .get(path)
        .set(auth ? { Authorization: auth } : {})
    ).status;
  const policy = async (value: string) =>
    (
      await request(running!.url)
        .get('/v1/hotels')
        .set('Authorization', ALICE)
        .set('X-Gateway-Test-Allow', value)
        .expect(200)
    ).headers['ratelimit-policy'];
  const applied = (check: () => Promise<boolean>) => async (reload: ReloadLine) => reload.applied && (await check());

  it('loads a Kubernetes ConfigMap volume once, not again from its hidden folders, and applies each update of records, users and limits', async () => {
    const dir = join(root, 'config');
    publishAsKubernetes(dir, demoFiles());
    await start(dir);
    const diag = (
      await request(running!.url).get('/gateway/v0/diag/?json=true').set('Authorization', ALICE).expect(200)
    ).body;
    assert.deepEqual(diag.config.errors, []);
    assert.deepEqual(diag.config.sources, [join(dir, 'services.yaml')]);

    let n = 0;
    for (const quota of [5, 6]) {
      const files = demoFiles();
      files['extra.yaml'] = EXTRA_MAPPING.replace('/extra/', `/extra${quota}/`);
      files['ratelimit.yaml'] = files['ratelimit.yaml'].replace('requests_per_unit: 3', `requests_per_unit: ${quota}`);
      files['users.htpasswd'] += `carol${quota}:${bcrypt.hashSync('chess', 4)}\n`;
      await changeAndAwait(
        running!.log,
        () => publishAsKubernetes(dir, files),
        applied(
          async () =>
            (await status(`/extra${quota}/messages/1`)) === 200 &&
            (await policy(`v${n++}`)) === `"test-allow";q=${quota};w=60`,
        ),
      );
      assert.equal(await status('/v1/hotels', basic(`carol${quota}`, 'chess')), 200);
    }
    assert.equal(await status('/extra5/messages/1'), 404);
  });

  it('applies each update of a ratelimit/ folder that a ConfigMap volume carries', async () => {
    const dir = join(root, 'config');
    const files = demoFiles();
    const limits = files['ratelimit.yaml'];
    delete files['ratelimit.yaml'];
    publishAsKubernetes(dir, { ...files, 'ratelimit/gateway.yaml': limits });
    await start(dir);
    assert.equal(await policy('first'), '"test-allow";q=3;w=60');
    let n = 0;
    for (const quota of [7, 8]) {
      await changeAndAwait(
        running!.log,
        () =>
          publishAsKubernetes(dir, {
            ...files,
            'ratelimit/gateway.yaml': limits.replace('requests_per_unit: 3', `requests_per_unit: ${quota}`),
          }),
        applied(async () => (await policy(`v${n++}`)) === `"test-allow";q=${quota};w=60`),
      );
    }
  });

  it('applies a config folder deleted and made again, and its changes after', async () => {
    const dir = join(root, 'config');
    cpSync(DEMO_CONFIG, dir, { recursive: true });
    await start(dir);
    await changeAndAwait(
      running!.log,
      () => rmSync(dir, { recursive: true }),
      (r) => !r.applied,
    );
    assert.equal(await status('/v1/messages/1'), 200, 'the last good config keeps serving');
    await changeAndAwait(
      running!.log,
      () => {
        cpSync(DEMO_CONFIG, dir, { recursive: true });
        writeFileSync(join(dir, 'extra.yaml'), EXTRA_MAPPING);
      },
      applied(async () => (await status('/extra/messages/1')) === 200),
    );
    await changeAndAwait(
      running!.log,
      () => writeFileSync(join(dir, 'extra.yaml'), EXTRA_MAPPING.replace('/extra/', '/again/')),
      applied(async () => (await status('/again/messages/1')) === 200),
    );
  });
});
