import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, REPO_ROOT } from '../support/process';
import { groupAlive, manifest, run, startServer } from '../support/package';
import { freshDataDir } from '../support/pglite';

/** What a clone of the repository holds that a build and a start read. */
const CHECKOUT_FILES = [
  'package.json',
  'package-lock.json',
  'scripts',
  'src',
  'tsconfig.json',
  'tsconfig.build.json',
  'config',
  'proto',
];

/** A fresh checkout of the repository's files, without node_modules or dist/. */
function checkout(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-checkout-'));
  for (const name of CHECKOUT_FILES) cpSync(join(REPO_ROOT, name), join(dir, name), { recursive: true });
  return dir;
}

/**
 * Runs `npm start` in `dir`, asks it for the demo's first message, stops it
 * with SIGTERM and waits for its last line; the pid of what npm started.
 */
async function assertServesDemo(dir: string): Promise<number> {
  const server = await startServer('npm', ['start'], dir, {
    PORT: '0',
    GRPC_PORT: '0',
    LOG_LEVEL: 'info',
    GATEHOUSE_DATA: await freshDataDir(),
  });
  try {
    const res = await fetch(`${server.url}/v1/messages/1`);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { content: string }).content, 'Welcome to Gatehouse, Alice.');
    server.child.kill('SIGTERM');
    await server.ended();
    assert.match(server.output(), /"msg":"gatehouse stopped"/);
    return server.child.pid!;
  } finally {
    server.child.kill('SIGKILL');
  }
}

describe('npm prepare (scripts/prepare.js)', function () {
  const made: string[] = [];
  const fresh = () => {
    const dir = checkout();
    made.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a checkout without TypeScript and without dist/, naming what to run, rather than leave npm start unable to run', async () => {
    const dir = fresh();
    const prepared = await run('npm', ['run', 'prepare'], dir);
    assert.equal(prepared.code, 1, prepared.stdout);
    assert.match(
      prepared.stderr,
      /gatehouse: dist\/ is not built, and building it needs TypeScript, a devDependency: run npm install \(or npm ci\)/,
    );
    assert.equal(existsSync(join(dir, 'dist')), false);
  });

  it("tells a project that installs a fresh checkout's folder to run npm install in the checkout first", async () => {
    const dir = fresh();
    const project = mkdtempSync(join(tmpdir(), 'gatehouse-project-'));
    made.push(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'travel-app', version: '1.0.0', private: true }),
    );
    const installed = await run('npm', ['install', dir, '--prefer-offline', '--no-audit', '--no-fund'], project);
    assert.notEqual(installed.code, 0, installed.stdout);
    assert.ok(
      installed.stderr.includes(
        `gatehouse: ${dir} is installed as a folder, which npm links as it is, without its dev dependencies: run npm install in ${dir} first`,
      ),
      installed.stderr,
    );
    assert.equal(existsSync(join(dir, 'dist')), false);
  });

  it('refuses to pack a package without its compiled library', async () => {
    const pack = await run('npm', ['pack', '--dry-run'], fresh());
    assert.notEqual(pack.code, 0);
    assert.match(pack.stderr, /building dist\/ for the package needs TypeScript: run npm install first/);
  });

  it("builds dist/ in a fresh checkout's npm install, after which npm start serves the demo: the README's two commands", async function () {
    this.timeout(600_000);
    const dir = fresh();
    const installed = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], dir);
    assert.equal(installed.code, 0, installed.stderr);
    for (const file of [manifest.main, manifest.types, ...Object.values(manifest.bin)])
      assert.ok(existsSync(join(dir, file)), `${file} was not built`);
    await assertServesDemo(dir);
  });

  it('keeps, in a production install after a full one, the dist/ the full one built: no compiler is installed, and npm start serves the demo', async function () {
    this.timeout(300_000);
    const dir = fresh();
    assertBuilt();
    // dist/ as npm install (which .ci/run and npm test run) built it: the build itself is npm run build's.
    cpSync(join(REPO_ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
    const main = readFileSync(join(dir, manifest.main), 'utf8');
    const production = await run('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], dir);
    assert.equal(production.code, 0, production.stderr);
    assert.match(
      production.stdout,
      /TypeScript is not installed \(a production install\): dist\/ is kept as it was built/,
    );
    assert.equal(readFileSync(join(dir, manifest.main), 'utf8'), main);
    for (const tool of ['typescript', 'tsx', 'esbuild', 'mocha'])
      assert.equal(existsSync(join(dir, 'node_modules', tool)), false, `${tool} was installed`);

    const pid = await assertServesDemo(dir);
    assert.equal(groupAlive(pid), false, 'a process of npm start outlived it');
  });
});
