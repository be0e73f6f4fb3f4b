/**
 * @module test/platform/undici
 * What src/platform/undici relies on in undici, checked against the
 * undici installed: the bytes it gives are those undici compiles for its
 * HTTP/1.1 parser, and, kept by `compiledBaselineOnly` while another
 * module compiles on the baseline compiler only, that parser is still
 * optimised once undici has parsed enough. Run in a process of its own,
 * with V8's test functions, whose flags nothing else shares.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { UNDICI_VERSION } from '../../src/platform';
import { pinnedAt, relies } from '../support/reliance';

const PLATFORM = join(__dirname, '..', '..', 'src', 'platform', 'index.ts');

/** A WebAssembly module of one empty function: what compiles on the baseline compiler only, in PGlite's place. */
const EMPTY_MODULE = '0061736d01000000010401600000030201000a040102000b';

/**
 * Compiles a module inside `compiledBaselineOnly`, keeping undici's parser,
 * then has undici fetch from a local server until its parser is optimised
 * (or long after it would be), noting the bytes undici compiled.
 */
const SCRIPT = `
const http = require('node:http');
const { request, Agent } = require('undici');
const { compiledBaselineOnly, undiciParserWasm } = require(${JSON.stringify(PLATFORM)});
const compiled = [];
let parse;
let watching = false;
WebAssembly.Module = new Proxy(WebAssembly.Module, {
  construct(target, args) {
    if (watching) compiled.push(Buffer.from(args[0]));
    return Reflect.construct(target, args);
  },
});
WebAssembly.Instance = new Proxy(WebAssembly.Instance, {
  construct(target, args) {
    const instance = Reflect.construct(target, args);
    if (watching && instance.exports.llhttp_execute) parse = instance.exports.llhttp_execute;
    return instance;
  },
});
(async () => {
  await compiledBaselineOnly(async () => new WebAssembly.Module(Buffer.from('${EMPTY_MODULE}', 'hex')), undiciParserWasm());
  watching = true;
  const server = http.createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = 'http://127.0.0.1:' + server.address().port + '/';
  const dispatcher = new Agent();
  let rounds = 0;
  while (!(parse && %IsTurboFanFunction(parse)) && rounds < 500) {
    for (let i = 0; i < 20; i++) await (await request(url, { dispatcher })).body.text();
    rounds++;
  }
  const kept = undiciParserWasm();
  const same = compiled.length > 0 && compiled.every((bytes) => kept.some((k) => Buffer.compare(Buffer.from(k), bytes) === 0));
  console.log(JSON.stringify({ rounds, compiled: compiled.length, same, optimised: parse !== undefined && %IsTurboFanFunction(parse) }));
  await dispatcher.close();
  server.close();
})();
`;

describe('platform/undici: what Gatehouse relies on in undici', () => {
  it('is the version the platform file was written against', () => {
    pinnedAt('undici', UNDICI_VERSION);
  });

  it('compiles the parser bytes it was kept for, and optimises that parser after PGlite compiled on the baseline compiler only', () => {
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '-e', SCRIPT], {
      encoding: 'utf8',
    });
    const { rounds, compiled, same, optimised } = JSON.parse(out) as Record<string, number | boolean>;
    const seen = `${String(compiled)} modules compiled, ${same ? 'all' : 'not all'} of the bytes kept; optimised ${String(optimised)} after ${String(rounds)} rounds`;
    relies(
      'undici',
      UNDICI_VERSION,
      'compiles its HTTP/1.1 parser from the bytes undiciParserWasm gives',
      same === true,
      seen,
    );
    relies(
      'undici',
      UNDICI_VERSION,
      'has its parser optimised once kept by compiledBaselineOnly',
      optimised === true,
      seen,
    );
  });
});
