/**
 * @module test/cli/compile-cache
 * `--compile-cache` (`GATEHOUSE_COMPILE_CACHE`): where a server keeps the
 * code Node compiled for it, so that its next start compiles only what
 * changed (Node 22.1 or later; an older Node takes the option and keeps
 * nothing); `false` for none; a value that is no folder is refused as any
 * option is.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMPILE_CACHE_ENV, COMPILE_CACHE_FLAG } from '../../src/cli/compile-cache';
import { OPTIONS } from '../../src/gatehouse/options';
import { killAll, runCli, startCli } from '../support/process';

/** Whether the Node running the tests (and the servers they start) has a compile cache. */
const SUPPORTED = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function';
const ENV = { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'warn' };
const ROUTES =
  'apiVersion: gateway/v1\nkind: Mapping\nname: api\nprefix: /v1/\nrewrite: ""\nservice: api\nbypass_auth: true\n';

/** The files kept under `dir`, in the folder Node makes there for its version. */
function cached(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name);
}

describe('gatehouse start --compile-cache', function () {
  let parent: string;
  let config: string;
  before(() => {
    parent = mkdtempSync(join(tmpdir(), 'gatehouse-compile-cache-'));
    config = mkdtempSync(join(parent, 'config-'));
    writeFileSync(join(config, 'routes.yaml'), ROUTES);
  });
  afterEach(killAll);
  after(() => rmSync(parent, { recursive: true, force: true }));

  it('is read under the flag and the variable its option declares', () => {
    assert.equal(OPTIONS.compileCache.flag, COMPILE_CACHE_FLAG);
    assert.equal(OPTIONS.compileCache.env, COMPILE_CACHE_ENV);
  });

  /** Starts a server with `args` and `env`, a temporary folder of its own; asks it one request; stops it; resolves that folder. */
  async function serveOnce(args: readonly string[], env: Record<string, string> = {}): Promise<string> {
    const temp = mkdtempSync(join(parent, 'tmp-'));
    const server = await startCli(['start', '--config', config, '--no-watch', ...args], {
      env: { ...ENV, TMPDIR: temp, ...env },
    });
    assert.equal((await fetch(`${server.address}/v1/messages/1`)).status, 200);
    // Kept as it serves, not only as it exits: a server that is killed keeps what its start compiled.
    const kept = cached(args.length > 0 ? args[1] : (env[COMPILE_CACHE_ENV] ?? join(temp, 'node-compile-cache')));
    if (SUPPORTED) assert.ok(kept.length > 100, `${kept.length} files kept as it serves`);
    else assert.deepEqual(kept, [], 'a Node without a compile cache kept files');
    assert.equal((await server.stop()).code, 0);
    return temp;
  }

  it("keeps the code it compiled in Node's folder by default: node-compile-cache in the temporary folder", async () => {
    await serveOnce([]);
  });

  it('keeps it in the folder the flag or the variable names', async () => {
    await serveOnce([COMPILE_CACHE_FLAG, join(parent, 'by-flag')]);
    await serveOnce([], { [COMPILE_CACHE_ENV]: join(parent, 'by-variable') });
  });

  it('keeps none with false, from the flag or the variable', async () => {
    for (const [args, env] of [
      [[COMPILE_CACHE_FLAG, 'false'], {}],
      [[], { [COMPILE_CACHE_ENV]: 'false' }],
    ] as const) {
      const temp = mkdtempSync(join(parent, 'tmp-'));
      const server = await startCli(['start', '--config', config, '--no-watch', ...args], {
        env: { ...ENV, TMPDIR: temp, ...env },
      });
      assert.equal((await fetch(`${server.address}/v1/messages/1`)).status, 200);
      assert.equal((await server.stop()).code, 0);
      assert.equal(existsSync(join(temp, 'node-compile-cache')), false);
    }
  });

  it('refuses a flag with no folder as a usage error (exit 2), and a variable set to blanks as any variable (exit 1)', async () => {
    const flag = await runCli(['start', '--config', config, COMPILE_CACHE_FLAG, ''], { env: ENV });
    assert.equal(flag.code, 2, flag.stderr);
    assert.match(
      flag.stderr,
      /^gatehouse: --compile-cache: must be the name of a folder, or false for none \(got ""\)$/m,
    );
    assert.match(flag.stderr, /Run 'gatehouse start --help' for usage\./);
    const variable = await runCli(['start', '--config', config], { env: { ...ENV, [COMPILE_CACHE_ENV]: '  ' } });
    assert.equal(variable.code, 1, variable.stderr);
    assert.match(
      variable.stderr,
      /^gatehouse: GATEHOUSE_COMPILE_CACHE: must be the name of a folder, or false for none \(got " {2}"\)$/m,
    );
  });

  it('says why a folder it cannot use is none, and serves without it', async function () {
    if (!SUPPORTED) this.skip();
    const file = join(parent, 'a-file');
    writeFileSync(file, 'not a folder');
    const server = await startCli(
      ['start', '--config', config, '--no-watch', COMPILE_CACHE_FLAG, join(file, 'cache')],
      {
        env: ENV,
      },
    );
    assert.equal((await fetch(`${server.address}/v1/messages/1`)).status, 200);
    assert.match(server.output().stderr, new RegExp(`^gatehouse: no compile cache in ${join(file, 'cache')}: `, 'm'));
    assert.equal((await server.stop()).code, 0);
  });
});
