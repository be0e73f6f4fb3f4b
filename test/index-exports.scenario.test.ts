import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './support/process';
import { packedProject, run } from './support/package';
import { documents } from './support/doc-blocks';

/** The prose of the README and docs/, line breaks as spaces, without code blocks (what they use is compiled elsewhere). */
const DOCS = documents()
  .map((file) => readFileSync(join(REPO_ROOT, file), 'utf8'))
  .join('\n\n')
  .replace(/^ *```[^]*?^ *```$/gm, '')
  .replace(/\s*\n\s*/g, ' ');

/** The code spans of `text`: what is between backticks. */
function codeSpans(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
}

/**
 * The sentence of the docs that begins with `start`, to its first full
 * stop outside parentheses, with the code spans at most one parenthesis
 * deep: a list of options in parentheses counts, an aside on one does not,
 * nor an option's default, which opens its parenthesis and is followed by a
 * colon (`sourceCluster` (`gatehouse`: ...)).
 */
function listedIn(start: string): string[] {
  const from = DOCS.indexOf(start);
  assert.notEqual(from, -1, `the docs have no sentence beginning ${start}`);
  const spans: string[] = [];
  let depth = 0;
  let inCode = false;
  let opensParenthesis = false;
  let code = '';
  for (let i = from + start.length; i < DOCS.length; i++) {
    const c = DOCS[i];
    if (inCode) {
      if (c === '`') {
        inCode = false;
        const isDefault = opensParenthesis && DOCS[i + 1] === ':';
        if (depth <= 1 && !isDefault) spans.push(code);
      } else code += c;
    } else if (c === '`') {
      inCode = true;
      opensParenthesis = DOCS[i - 1] === '(';
      code = '';
    } else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '.' && depth === 0 && /\s/.test(DOCS[i + 1] ?? ' ')) break;
  }
  // `tls: {cert, key}` names the option tls; `true`, `0` or `gatehouse.io` name none.
  return spans
    .map((s) => /^([a-z][A-Za-z]*)(?::|$)/.exec(s)?.[1])
    .filter((n): n is string => n !== undefined && n !== 'true' && n !== 'false');
}

/** What the docs tell an embedding app to use by name, anywhere in them. */
function namesInDocs(): { values: string[]; members: string[] } {
  const values = new Set<string>();
  const members = new Set<string>();
  for (const span of codeSpans(DOCS)) {
    const factory = /^(create[A-Z]\w*)(?:\(.*\))?$/.exec(span);
    if (factory) values.add(factory[1]);
    const state = /^ctx\.state\[([A-Z][A-Z0-9_]*)\]$/.exec(span);
    if (state) values.add(state[1]);
    // A function or a constant, not a file (`ratelimit.yaml`).
    const member =
      /^(http|gateway|auth|ratelimit|api|bookings|diag|cors|telemetry)\.([a-z]+[A-Z]\w*|[A-Z][A-Z0-9_]+)$/.exec(span);
    if (member) members.add(`${member[1]}.${member[2]}`);
  }
  return { values: [...values].sort(), members: [...members].sort() };
}

describe("the package's exports, as the docs name them", function () {
  let project: string;
  let installed: string;
  let checker: ts.TypeChecker;
  /** The package's top-level exports, by name, as a TypeScript user's compiler sees them. */
  let exported: Map<string, ts.Symbol>;
  let problems: string[];
  const { values, members } = namesInDocs();

  before(async function () {
    this.timeout(180_000);
    ({ project, installed } = await packedProject());
    const file = join(project, 'readme-names.mts');
    // What the docs tell an app to do with them, as a user writes it.
    writeFileSync(
      file,
      `import Koa from 'koa';
import * as gatehouse from 'gatehouse';
import { createGatehouse, RATE_LIMIT_METADATA_STATE, type GatehouseModule, type QuotaModeMetadata } from 'gatehouse';

const weather: GatehouseModule = { name: 'weather', app: new Koa() };
const running = await createGatehouse({ configDir: './config', grpcPort: false, watch: false, modules: [weather] });
running.app.use(async (ctx, next) => {
  const quota: QuotaModeMetadata | undefined = ctx.state[RATE_LIMIT_METADATA_STATE];
  if (quota?.quotaModeViolations !== undefined) ctx.set('X-Over-Quota', 'yes');
  await next();
});
export { gatehouse, running };
`,
    );
    const program = ts.createProgram([file], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ESNext,
      types: ['node'],
      strict: true,
      noEmit: true,
    });
    checker = program.getTypeChecker();
    const source = program.getSourceFile(file)!;
    problems = ts
      .getPreEmitDiagnostics(program, source)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    const ofPackage = source.statements
      .filter(ts.isImportDeclaration)
      .find((d) => (d.moduleSpecifier as ts.StringLiteral).text === 'gatehouse')!;
    const moduleSymbol = checker.getSymbolAtLocation(ofPackage.moduleSpecifier)!;
    exported = new Map(checker.getExportsOfModule(moduleSymbol).map((s) => [s.name, s]));
  });

  it('finds the names in the docs', () => {
    for (const name of ['createGatehouse', 'createGateway', 'createAuthService', 'RATE_LIMIT_METADATA_STATE'])
      assert.ok(values.includes(name), name);
    assert.ok(members.includes('http.createServiceApp'));
  });

  it("compiles the docs' uses of them, against the built package's declarations", () => {
    assert.deepEqual(problems, []);
  });

  it('exports every value the docs name from the package itself, in its declarations and at run time', async () => {
    assert.deepEqual(
      values.filter((name) => !exported.has(name)),
      [],
    );
    const script = `const g = require('gatehouse'); console.log(JSON.stringify(${JSON.stringify(values)}.filter((n) => g[n] === undefined)));`;
    const loaded = await run(process.execPath, ['-e', script], project);
    assert.equal(loaded.stdout, '[]\n', loaded.stderr);
    const namespaces = `const g = require('gatehouse'); console.log(JSON.stringify(${JSON.stringify(members)}.filter((m) => { const [ns, name] = m.split('.'); return g[ns]?.[name] === undefined; })));`;
    const inNamespaces = await run(process.execPath, ['-e', namespaces], project);
    assert.equal(inNamespaces.stdout, '[]\n', inNamespaces.stderr);
  });

  it('exports the types of what those functions take and give, so that an app can name them', () => {
    const missing: string[] = [];
    /** A type declared by the package (not Koa's, not Node's) and given a name there, which an app can only name if it is exported. */
    const ownNamed = (type: ts.Type): string | undefined => {
      const symbol = type.aliasSymbol ?? type.getSymbol();
      const declaration = symbol?.declarations?.[0];
      if (!symbol || !declaration || !declaration.getSourceFile().fileName.startsWith(`${installed}/`))
        return undefined;
      return ts.isInterfaceDeclaration(declaration) ||
        ts.isTypeAliasDeclaration(declaration) ||
        ts.isClassDeclaration(declaration)
        ? symbol.name
        : undefined;
    };
    for (const name of values) {
      const symbol = exported.get(name);
      if (!symbol) continue;
      const type = checker.getTypeOfSymbol(
        symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol,
      );
      for (const signature of type.getCallSignatures()) {
        const given = signature.getReturnType();
        const awaited = checker.getAwaitedType(given) ?? given;
        const taken = signature.getParameters().map((p) => checker.getNonNullableType(checker.getTypeOfSymbol(p)));
        for (const t of [awaited, ...taken]) {
          const typeName = ownNamed(t);
          if (typeName !== undefined && !exported.has(typeName)) missing.push(`${typeName} (of ${name})`);
        }
      }
    }
    assert.deepEqual([...new Set(missing)], []);
  });

  it('takes every option the docs give createGatehouse and createAuthService, and resolves what it says createGatehouse resolves', () => {
    const propertiesOf = (factory: string, which: 'options' | 'result'): string[] => {
      const symbol = checker.getAliasedSymbol(exported.get(factory)!);
      const [signature] = checker.getTypeOfSymbol(symbol).getCallSignatures();
      const type =
        which === 'options'
          ? checker.getNonNullableType(checker.getTypeOfSymbol(signature.getParameters()[0]))
          : (checker.getAwaitedType(signature.getReturnType()) ?? signature.getReturnType());
      return type.getProperties().map((p) => p.name);
    };
    const gatehouseOptions = listedIn('`createGatehouse(options)` takes');
    assert.ok(
      gatehouseOptions.includes('configSource') && !gatehouseOptions.includes('hostname'),
      gatehouseOptions.join(),
    );
    const authOptions = listedIn('`createAuthService` takes');
    assert.deepEqual(authOptions, ['threads', 'maxQueued', 'maxWaitMs']);
    const resolves = /It resolves `\{([^}]*)\}`/.exec(DOCS);
    assert.ok(resolves, 'the docs say what createGatehouse resolves');
    const result = resolves[1].split(',').map((p) => p.trim().replace(/\(\)$/, ''));
    assert.deepEqual(
      [
        ...gatehouseOptions
          .filter((o) => !propertiesOf('createGatehouse', 'options').includes(o))
          .map((o) => `createGatehouse option ${o}`),
        ...authOptions
          .filter((o) => !propertiesOf('createAuthService', 'options').includes(o))
          .map((o) => `createAuthService option ${o}`),
        ...result
          .filter((p) => !propertiesOf('createGatehouse', 'result').includes(p))
          .map((p) => `createGatehouse result ${p}`),
      ],
      [],
    );
  });
});
