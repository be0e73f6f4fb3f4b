import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './support/process';
import { allBlocks } from './support/doc-blocks';
import { manifest as pkg, packedProject, run, startServer, walk } from './support/package';
import { freshDataDir } from './support/pglite';

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

describe('the gatehouse package', function () {
  /** A project of a user's, with the package as `npm pack` makes it unpacked in its node_modules. */
  let project: string;
  /** The installed package: `<project>/node_modules/gatehouse`. */
  let installed: string;
  /** The tarball's files, as npm lists them. */
  let packed: string[];

  before(async function () {
    this.timeout(180_000);
    ({ project, installed, packed } = await packedProject());
  });

  it('holds the compiled library, its command, the protos and the demo config, and no sources, tests or stale output', () => {
    const targets = [
      pkg.main,
      pkg.types,
      ...Object.values(pkg.bin),
      ...Object.values(pkg.exports).flatMap((t) => (typeof t === 'string' ? [t] : Object.values(t))),
    ];
    for (const target of targets)
      assert.ok(packed.includes(target.replace(/^\.\//, '')), `${target} is not in the package`);
    for (const folder of ['proto', 'config']) {
      const want = walk(join(REPO_ROOT, folder))
        .map((f) => `${folder}/${f}`)
        .sort();
      assert.deepEqual(packed.filter((f) => f.startsWith(`${folder}/`)).sort(), want);
    }
    assert.deepEqual(
      packed.filter((f) => /^(src|test|bench|\.ci)\//.test(f) || (f.endsWith('.ts') && !f.endsWith('.d.ts'))),
      [],
    );
    // A file compiled from a source since removed would ship with the package.
    const sources = new Set(walk(join(REPO_ROOT, 'src')));
    assert.deepEqual(
      packed.filter((f) => f.startsWith('dist/') && f.endsWith('.js') && !sources.has(f.slice(5, -3) + '.ts')),
      [],
    );
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
      if (!shipsTypes(name) && !(typesPackage(name) in pkg.dependencies))
        missing.push(`${specifier} (${typesPackage(name)})`);
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
    const outside = [...required].filter(
      (s) => !s.startsWith('node:') && !builtins.has(s) && !(packageOf(s) in pkg.dependencies),
    );
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
    const args = [bin, 'start', '--port', '0', '--grpc-port', '0', '--no-watch', '--config', join(installed, 'config')];
    // The installed package's own PGlite keeps the bookings, in a folder of this test's.
    const server = await startServer(process.execPath, args, project, { GATEHOUSE_DATA: await freshDataDir() });
    assert.match(server.output(), /listening on \S+ \(gRPC rate limits on [^;)]+; config folder /);
    const res = await fetch(`${server.url}/v1/messages/1`);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { content: string }).content, 'Welcome to Gatehouse, Alice.');
    server.child.kill('SIGTERM');
    const ended = await server.ended();
    assert.equal(ended.code, 0, ended.stderr);
  });

  it('is required from CommonJS and imported from an ES module, without a TypeScript loader, and serves the demo', async () => {
    const body = (load: string) => `${load}
      const gatehouse = await createGatehouse({ configDir: ${JSON.stringify(join(installed, 'config'))}, port: 0, grpcPort: false, watch: false, bookingStore: 'memory' });
      const { url } = await gatehouse.start();
      const res = await fetch(url + '/v1/messages/1');
      console.log(res.status, (await res.json()).content);
      await gatehouse.stop();`;
    writeFileSync(
      join(project, 'use.cjs'),
      `(async () => { ${body("const { createGatehouse } = require('gatehouse');")} })();`,
    );
    writeFileSync(join(project, 'use.mjs'), body("import { createGatehouse } from 'gatehouse';"));
    for (const file of ['use.cjs', 'use.mjs']) {
      const used = await run(process.execPath, [file], project);
      assert.equal(used.stdout, '200 Welcome to Gatehouse, Alice.\n', `${file}: ${used.stderr}`);
      assert.equal(used.code, 0, `${file}: ${used.stderr}`);
    }
  });

  it('checks a large config folder on a worker thread of the compiled package, at start and at reload, from the command and the library', async function () {
    // Five processes and two reloads of 1000 Mappings one after another, on a busy machine: the timeout only ends a hang.
    this.timeout(600_000);
    const folder = mkdtempSync(join(project, 'large-config-'));
    cpSync(join(installed, 'config'), folder, { recursive: true });
    // 1000 Mappings: past what is checked on the event loop, so that the compiled worker.js does it.
    const many = (prefix: string) =>
      Array.from(
        { length: 1000 },
        (_, i) =>
          `{apiVersion: gateway/v1, kind: Mapping, name: ${prefix}${i}, prefix: /${prefix}${i}/, service: api, rewrite: /v1/, bypass_auth: true}`,
      ).join('\n---\n');
    writeFileSync(join(folder, 'many.yaml'), many('p'));
    const script = `
      const { createGatehouse } = require('gatehouse');
      const { writeFileSync } = require('node:fs');
      const { join } = require('node:path');
      (async () => {
        const gatehouse = await createGatehouse({ configDir: ${JSON.stringify(folder)}, port: 0, grpcPort: false, watch: false, bookingStore: 'memory' });
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
    const server = await startServer(
      process.execPath,
      [bin, 'start', '--port', '0', '--grpc-port', '0', '--no-watch', '--config', folder],
      project,
      { LOG_LEVEL: 'warn', ...data },
    );
    assert.equal((await fetch(`${server.url}/q999/messages/1`)).status, 200);
    server.child.kill('SIGTERM');
    const ended = await server.ended();
    assert.equal(ended.code, 0, ended.stderr);
  });

  it('lets an app import its index only, not the files behind it, whose names may change', async () => {
    writeFileSync(join(project, 'deep.cjs'), "require('gatehouse/dist/gateway/gateway.js');");
    const deep = await run(process.execPath, ['deep.cjs'], project);
    assert.notEqual(deep.code, 0);
    assert.match(deep.stderr, /ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });

  it("compiles the docs' TypeScript examples as written, with TypeScript's strictest checks, against the package's declarations", () => {
    const examples = allBlocks()
      .filter((b) => b.lang === 'ts')
      .map((b) => b.text);
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
    const ours = program
      .getSourceFiles()
      .filter((f) => files.includes(f.fileName) || f.fileName.startsWith(`${installed}/`));
    assert.ok(
      ours.some((f) => f.fileName.endsWith('/dist/gatehouse/gatehouse.d.ts')),
      'the declarations were not reached',
    );
    const problems = [
      ...program.getOptionsDiagnostics(),
      ...ours.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
    ].map((d) => {
      const where = d.file ? `${relative(project, d.file.fileName)}: ` : '';
      return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
    });
    assert.deepEqual(problems, []);
  });
});
