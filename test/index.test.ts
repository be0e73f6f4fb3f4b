import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './support/process';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** The package a bare specifier names: `koa`, `@grpc/grpc-js`, `protobufjs` for `protobufjs/ext/descriptor`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Whether the package ships its own declarations (`types`, `typings`, or `exports` conditions naming them). */
function shipsTypes(name: string): boolean {
  const own = JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8'));
  return Boolean(own.types ?? own.typings) || JSON.stringify(own.exports ?? {}).includes('"types"') || JSON.stringify(own.exports ?? {}).includes('.d.ts');
}

/** The `@types` package DefinitelyTyped publishes for `name`. */
function typesPackage(name: string): string {
  return `@types/${name.startsWith('@') ? name.slice(1).replace('/', '__') : name}`;
}

/** Every bare module the declarations of the build (as `npm run build` writes them) import. */
function declarationImports(): Set<string> {
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    esModuleInterop: true,
    skipLibCheck: true,
    declaration: true,
    emitDeclarationOnly: true,
    types: ['node'],
    rootDir: join(REPO_ROOT, 'src'),
    outDir: join(REPO_ROOT, 'dist'),
  };
  const program = ts.createProgram([join(REPO_ROOT, 'src/index.ts'), join(REPO_ROOT, 'src/cli/main.ts')], options);
  const found = new Set<string>();
  const pattern = /(?:from\s+|import\()\s*['"]([^'"./][^'"]*)['"]/g;
  program.emit(undefined, (fileName, text) => {
    if (!fileName.endsWith('.d.ts')) return;
    for (const m of text.matchAll(pattern)) found.add(m[1]);
  });
  return found;
}

describe('the gatehouse package', function () {
  this.timeout(60_000);

  it("lets a TypeScript user compile against its declarations with only its dependencies installed", () => {
    const builtins = new Set(builtinModules);
    const missing: string[] = [];
    for (const specifier of declarationImports()) {
      if (specifier.startsWith('node:') || builtins.has(specifier)) continue;
      const name = packageOf(specifier);
      assert.ok(name in pkg.dependencies, `the declarations import ${specifier}, which is not a dependency`);
      if (!shipsTypes(name) && !(typesPackage(name) in pkg.dependencies)) missing.push(`${specifier} (${typesPackage(name)})`);
    }
    assert.deepEqual(missing, [], 'declarations import these without their types among the dependencies');
  });
});
