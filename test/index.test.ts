import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './support/process';
import { freshDataDir } from './support/pglite';

interface Manifest {
  main: string;
  types: string;
  bin: Record<string, string>;
  exports: Record<string, string | Record<string, string>>;
  dependencies: Record<string, string>;
}

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Manifest;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end. The environment loses what would change it: the
 * gateway's variables, and NODE_OPTIONS, so that no TypeScript loader comes along.
 * A server it runs stops without a drain delay.
 */
async function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  const clean = { ...process.env };
  for (const name of ['NODE_OPTIONS', 'NODE_PATH', 'HOST', 'PORT', 'GRPC_PORT', 'GATEHOUSE_CONFIG', 'REDIS_URL', 'DATABASE_URL', 'GATEHOUSE_DATA', 'TLS_CERT', 'TLS_KEY', 'GRPC_MAX_MESSAGE_BYTES', 'MAX_DESCRIPTOR_ENTRIES']) delete clean[name];
  const child = spawn(command, args, { cwd, env: { ...clean, LOG_LEVEL: 'silent', DRAIN_DELAY_MS: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out.stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out.stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, ...out };
}

/** Every file under `dir`, relative to it, with `/` between names. */
function walk(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name), base) : [relative(base, join(dir, e.name)).split('\\').join('/')],
  );
}

/** The package a bare specifier names: `koa`, `@grpc/grpc-js`, `protobufjs` for `protobufjs/ext/descriptor`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Whether the installed package ships its own declarations (`types`, `typings`, or `exports` conditions naming them). */
function shipsTypes(name: string): boolean {
  const own = JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8'));
  const exported = JSON.stringify(own.exports ?? {});
  return Boolean(own.types ?? own.typings) || exported.includes('"types"') || exported.includes('.d.ts');
}

/** The `@types` package DefinitelyTyped publishes for `name`. */
function typesPackage(name: string): string {
  return `@types/${name.startsWith('@') ? name.slice(1).replace('/', '__') : name}`;
}

/** The TypeScript blocks of a README section, by its heading. */
function readmeExamples(heading: string): string[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n${heading}\n`);
  assert.notEqual(start, -1, `README has no section ${heading}`);
  const end = readme.indexOf('\n## ', start + heading.length + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
}

describe('the gatehouse package', function () {
  this.timeout(60_000);
  /** A project of a user's, with the package as `npm pack` makes it unpacked in its node_modules. */
  let project: string;
  /** The installed package: `<project>/node_modules/gatehouse`. */
  let installed: string;
  /** The tarball's files, as npm lists them. */
  let packed: string[];

  before(async function () {
    this.timeout(180_000);
    project = mkdtempSync(join(tmpdir(), 'gatehouse-package-'));
    const pack = await run('npm', ['pack', '--json', '--pack-destination', project], REPO_ROOT);
    assert.equal(pack.code, 0, pack.stderr);
    const [{ filename, files }] = JSON.parse(pack.stdout) as [{ filename: string; files: { path: string }[] }];
    packed = files.map((f) => f.path);
    installed = join(project, 'node_modules', 'gatehouse');
    mkdirSync(installed, { recursive: true });
    const untar = await run('tar', ['xzf', join(project, filename), '-C', installed, '--strip-components=1'], project);
    assert.equal(untar.code, 0, untar.stderr);
    // Its dependencies, and what the user's own code uses (koa, koa-mount and their types), as the repository has them.
    for (const name of readdirSync(join(REPO_ROOT, 'node_modules'))) {
      if (!name.startsWith('.')) symlinkSync(join(REPO_ROOT, 'node_modules', name), join(project, 'node_modules', name));
    }
  });

  after(() => {
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('holds the compiled library, its command, the protos and the demo config, and no sources, tests or stale output', () => {
    const targets = [pkg.main, pkg.types, ...Object.values(pkg.bin), ...Object.values(pkg.exports).flatMap((t) => (typeof t === 'string' ? [t] : Object.values(t)))];
    for (const target of targets) assert.ok(packed.includes(target.replace(/^\.\//, '')), `${target} is not in the package`);
    for (const folder of ['proto', 'config']) {
      const want = walk(join(REPO_ROOT, folder)).map((f) => `${folder}/${f}`).sort();
      assert.deepEqual(packed.filter((f) => f.startsWith(`${folder}/`)).sort(), want);
    }
    assert.deepEqual(packed.filter((f) => /^(src|test|bench|\.ci)\//.test(f) || (f.endsWith('.ts') && !f.endsWith('.d.ts'))), []);
    // A file compiled from a source since removed would ship with the package.
    const sources = new Set(walk(join(REPO_ROOT, 'src')));
    assert.deepEqual(packed.filter((f) => f.startsWith('dist/') && f.endsWith('.js') && !sources.has(f.slice(5, -3) + '.ts')), []);
    assert.match(readFileSync(join(installed, pkg.bin.gatehouse), 'utf8'), /^#!\/usr\/bin\/env node\n/);
  });

  it('lets a TypeScript user compile against its declarations with only its dependencies installed', () => {
    const builtins = new Set(builtinModules);
    const missing: string[] = [];
    const imported = new Set<string>();
    for (const file of walk(join(installed, 'dist')).filter((f) => f.endsWith('.d.ts'))) {
      const text = readFileSync(join(installed, 'dist', file), 'utf8');
      for (const m of text.matchAll(/(?:from\s+|import\()\s*['"]([^'"./][^'"]*)['"]/g)) imported.add(m[1]);
    }
    assert.ok(imported.has('koa'), 'the declarations were not read');
    for (const specifier of imported) {
      if (specifier.startsWith('node:') || builtins.has(specifier)) continue;
      const name = packageOf(specifier);
      assert.ok(name in pkg.dependencies, `the declarations import ${specifier}, which is not a dependency`);
      if (!shipsTypes(name) && !(typesPackage(name) in pkg.dependencies)) missing.push(`${specifier} (${typesPackage(name)})`);
    }
    assert.deepEqual(missing, [], 'declarations import these without their types among the dependencies');
  });

  it('needs at run time only its dependencies', () => {
    const builtins = new Set(builtinModules);
    const required = new Set<string>();
    for (const file of walk(join(installed, 'dist')).filter((f) => f.endsWith('.js'))) {
      const text = readFileSync(join(installed, 'dist', file), 'utf8');
      for (const m of text.matchAll(/require(?:\.resolve)?\(\s*['"`]([^'"`./][^'"`$]*)/g)) required.add(m[1]);
    }
    assert.ok(required.has('koa'), 'the compiled modules were not read');
    const outside = [...required].filter((s) => !s.startsWith('node:') && !builtins.has(s) && !(packageOf(s) in pkg.dependencies));
    assert.deepEqual(outside, []);
  });

  it('runs the gatehouse command with plain Node: --help, check, and start answering until SIGTERM', async () => {
    const bin = join(installed, pkg.bin.gatehouse);
    const help = await run(process.execPath, [bin, '--help'], project);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: gatehouse <command>/);
    const check = await run(process.execPath, [bin, 'check', join(installed, 'config')], project);
    assert.equal(check.code, 0, check.stderr);
    assert.match(check.stdout, /config: OK\n/);
    // start serves gRPC too: the protos are read from the package.
    const script = `
      const { spawn } = require('node:child_process');
      const child = spawn(process.execPath, [${JSON.stringify(bin)}, 'start', '--port', '0', '--grpc-port', '0', '--no-watch', '--config', ${JSON.stringify(join(installed, 'config'))}], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      // A start line this test does not know fails the test, rather than leaving a server behind.
      const guard = setTimeout(() => { console.log('no start line in: ' + out); child.kill('SIGKILL'); }, 20000);
      child.stdout.setEncoding('utf8').on('data', async (chunk) => {
        out += chunk;
        const m = /listening on (\\S+) \\(gRPC rate limits on [^;)]+; config folder /.exec(out);
        if (!m || child.answered) return;
        child.answered = true;
        clearTimeout(guard);
        const res = await fetch(m[1] + '/v1/messages/1');
        console.log(res.status, (await res.json()).content);
        child.kill('SIGTERM');
      });
      child.on('exit', (code) => console.log('exit', code));`;
    // The installed package's own PGlite keeps the bookings, in a folder of this test's.
    const start = await run(process.execPath, ['-e', script], project, { GATEHOUSE_DATA: await freshDataDir() });
    assert.equal(start.stdout, '200 Welcome to Gatehouse, Alice.\nexit 0\n', start.stderr);
  });

  it('is required from CommonJS and imported from an ES module, without a TypeScript loader, and serves the demo', async () => {
    const body = (load: string) => `${load}
      const gatehouse = await createGatehouse({ configDir: ${JSON.stringify(join(installed, 'config'))}, port: 0, grpcPort: false, watch: false });
      const { url } = await gatehouse.start();
      const res = await fetch(url + '/v1/messages/1');
      console.log(res.status, (await res.json()).content);
      await gatehouse.stop();`;
    writeFileSync(join(project, 'use.cjs'), `(async () => { ${body("const { createGatehouse } = require('gatehouse');")} })();`);
    writeFileSync(join(project, 'use.mjs'), body("import { createGatehouse } from 'gatehouse';"));
    for (const file of ['use.cjs', 'use.mjs']) {
      const used = await run(process.execPath, [file], project, { GATEHOUSE_DATA: await freshDataDir() });
      assert.equal(used.stdout, '200 Welcome to Gatehouse, Alice.\n', `${file}: ${used.stderr}`);
      assert.equal(used.code, 0, `${file}: ${used.stderr}`);
    }
  });

  it('checks a large config folder on a worker thread of the compiled package, at start and at reload, from the command and the library', async () => {
    const folder = mkdtempSync(join(project, 'large-config-'));
    cpSync(join(installed, 'config'), folder, { recursive: true });
    // 1000 Mappings: past what is checked on the event loop, so that the compiled worker.js does it.
    const many = (prefix: string) =>
      Array.from({ length: 1000 }, (_, i) => `{apiVersion: gateway/v1, kind: Mapping, name: ${prefix}${i}, prefix: /${prefix}${i}/, service: api, rewrite: /v1/, bypass_auth: true}`).join('\n---\n');
    writeFileSync(join(folder, 'many.yaml'), many('p'));
    const script = `
      const { createGatehouse } = require('gatehouse');
      const { writeFileSync } = require('node:fs');
      const { join } = require('node:path');
      (async () => {
        const gatehouse = await createGatehouse({ configDir: ${JSON.stringify(folder)}, port: 0, grpcPort: false, watch: false });
        const { url } = await gatehouse.start();
        const status = async (path) => (await fetch(url + path)).status;
        console.log('start', await status('/p999/messages/1'));
        writeFileSync(join(${JSON.stringify(folder)}, 'many.yaml'), ${JSON.stringify(many('q'))});
        console.log('reload', (await gatehouse.reload()).ok, await status('/q999/messages/1'), await status('/p999/messages/1'));
        const bomb = ['a: &a [x, x]', ...Array.from({ length: 120 }, (_, i) => 'k' + i + ': *a'), '#'.repeat(40000)].join('\\n');
        writeFileSync(join(${JSON.stringify(folder)}, 'bomb.yaml'), bomb);
        const refused = await gatehouse.reload();
        console.log('bomb', refused.ok, refused.problems.map((p) => p.replace(${JSON.stringify(folder)}, 'DIR')).join('|'), await status('/q999/messages/1'));
        await gatehouse.stop();
      })();`;
    writeFileSync(join(project, 'large.cjs'), script);
    // One data folder for the library's gateway and, once it has exited, the command's.
    const data = { GATEHOUSE_DATA: await freshDataDir() };
    const used = await run(process.execPath, ['large.cjs'], project, data);
    assert.equal(
      used.stdout,
      'start 200\nreload true 200 404\nbomb false DIR/bomb.yaml: YAML: uses aliases more than 100 times: refused, as a file that expands without bound would be 200\n',
      used.stderr,
    );
    const bin = join(installed, pkg.bin.gatehouse);
    const check = await run(process.execPath, [bin, 'check', folder], project);
    assert.equal(check.code, 1, check.stdout);
    assert.match(check.stderr, /bomb\.yaml: YAML: uses aliases more than 100 times/);
    rmSync(join(folder, 'bomb.yaml'));
    const start = `
      const { spawn } = require('node:child_process');
      const child = spawn(process.execPath, [${JSON.stringify(bin)}, 'start', '--port', '0', '--grpc-port', '0', '--no-watch', '--config', ${JSON.stringify(folder)}], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LOG_LEVEL: 'warn' } });
      let out = '';
      const guard = setTimeout(() => { console.log('no start line in: ' + out); child.kill('SIGKILL'); }, 30000);
      child.stdout.setEncoding('utf8').on('data', async (chunk) => {
        out += chunk;
        const m = /listening on (\\S+) /.exec(out);
        if (!m || child.answered) return;
        child.answered = true;
        clearTimeout(guard);
        console.log((await fetch(m[1] + '/q999/messages/1')).status);
        child.kill('SIGTERM');
      });
      child.on('exit', (code) => console.log('exit', code));`;
    const started = await run(process.execPath, ['-e', start], project, data);
    assert.equal(started.stdout, '200\nexit 0\n', started.stderr);
  });

  it('lets an app import its index only, not the files behind it, whose names may change', async () => {
    writeFileSync(join(project, 'deep.cjs'), "require('gatehouse/dist/gateway/gateway.js');");
    const deep = await run(process.execPath, ['deep.cjs'], project);
    assert.notEqual(deep.code, 0);
    assert.match(deep.stderr, /ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });

  it("compiles the README's library examples as written, with TypeScript's strictest checks, against the package's declarations", () => {
    const examples = readmeExamples('## As a library');
    assert.ok(examples.length > 0);
    const files = examples.map((code, i) => {
      const file = join(project, `example-${i}.mts`);
      writeFileSync(file, code);
      return file;
    });
    // What `tsc --init` writes, without skipping the package's declarations:
    // those are checked, and the examples, not every declaration they reach.
    const program = ts.createProgram(files, {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ESNext,
      types: ['node'],
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      verbatimModuleSyntax: true,
      isolatedModules: true,
      noEmit: true,
    });
    const ours = program.getSourceFiles().filter((f) => files.includes(f.fileName) || f.fileName.startsWith(`${installed}/`));
    assert.ok(ours.some((f) => f.fileName.endsWith('/dist/gatehouse/gatehouse.d.ts')), 'the declarations were not reached');
    const problems = [...program.getOptionsDiagnostics(), ...ours.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)])].map((d) => {
      const where = d.file ? `${relative(project, d.file.fileName)}: ` : '';
      return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
    });
    assert.deepEqual(problems, []);
  });

  describe('installed from a checkout without its devDependencies', () => {
    let checkout: string;

    before(() => {
      // A checkout as `npm ci --omit=dev` leaves it: no TypeScript.
      checkout = mkdtempSync(join(tmpdir(), 'gatehouse-checkout-'));
      copyFileSync(join(REPO_ROOT, 'package.json'), join(checkout, 'package.json'));
    });

    after(() => rmSync(checkout, { recursive: true, force: true }));

    it('prepares without building dist/, since npm start runs the sources', async () => {
      const prepared = await run('npm', ['run', 'prepare'], checkout);
      assert.equal(prepared.code, 0, prepared.stderr);
      assert.match(prepared.stdout, /dist\/ is not built/);
    });

    it('refuses to pack a package without its compiled library', async () => {
      const pack = await run('npm', ['pack', '--dry-run'], checkout);
      assert.notEqual(pack.code, 0);
      assert.match(pack.stderr, /building dist\/ needs TypeScript/);
    });
  });
});
