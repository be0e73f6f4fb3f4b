/**
 * @module test/files/yaml-limits
 * Every shape of YAML that makes the `yaml` package's tree grow without
 * bound (nesting, aliases, documents, tokens, long values) is refused at
 * the first token past its bound, with the reason and the place, before
 * the tree is built; a stream within the bounds reads as before, one
 * document at a time.
 */
import assert from 'node:assert/strict';
import { Lexer, parseAllDocuments } from 'yaml';
import { DEFAULT_YAML_LIMITS, yamlDocuments, YamlLimitError, type YamlLimits } from '../../src/files';
import { LOOK_AHEAD_AFTER } from '../../src/files/yaml-limits';

/** The refusal reading `text` ends in. */
function refusal(text: string, limits?: Partial<YamlLimits>): YamlLimitError {
  try {
    for (const doc of yamlDocuments(text, { limits: { ...DEFAULT_YAML_LIMITS, ...limits } }))
      doc.toJS({ maxAliasCount: -1 });
  } catch (err) {
    assert.ok(err instanceof YamlLimitError, String(err));
    return err;
  }
  return assert.fail('the text should have been refused');
}

/** The values of every document of `text`. */
function values(text: string, limits?: Partial<YamlLimits>): unknown[] {
  return [...yamlDocuments(text, { limits: { ...DEFAULT_YAML_LIMITS, ...limits } })].map((doc) =>
    doc.toJS({ maxAliasCount: -1 }),
  );
}

/** Block mappings nested `depth` deep, each one space further in. */
function blockMaps(depth: number): string {
  return Array.from({ length: depth }, (_, i) => `${' '.repeat(i)}k${i}:\n`).join('') + `${' '.repeat(depth)}v\n`;
}

/**
 * The line and column of the lexical token number `n` (from 1) of a text
 * of one document, as the parser counts tokens: the lexer's marks take no
 * place in the text.
 */
function placeOfToken(text: string, n: number): { line: number; column: number } {
  let offset = 0;
  let count = 0;
  for (const lexeme of new Lexer().lex(text)) {
    if (++count === n) break;
    if (!['\x02', '\x18', '\x1f'].includes(lexeme)) offset += lexeme.length;
  }
  const before = text.slice(0, offset);
  return { line: before.split('\n').length, column: offset - before.lastIndexOf('\n') };
}

/** A block list of `items` plain values, a line each: some five tokens a line. */
function longList(items: number, value = 'x'): string {
  return `- ${value}\n`.repeat(items);
}

describe('YAML streams held to their bounds', () => {
  it('refuses nesting past 64 levels in every way YAML nests, at the first level past it, however long the text', () => {
    const deep = 7 * 1024 * 1024;
    for (const [shape, text] of [
      ['flow lists', `a: ${'['.repeat(deep)}`],
      ['flow mappings', `a: ${'{a: '.repeat(deep / 4)}`],
      ['block lists', '- '.repeat(deep / 2)],
      ['block mappings', blockMaps(200)],
      ['complex keys', '? '.repeat(200)],
    ] as const) {
      const err = refusal(text);
      assert.equal(err.limit, 'depth', shape);
      assert.match(
        err.message,
        /^nested too deeply to be read \(more than 64 mappings or lists inside each other\) at line \d+, column \d+: refused$/,
        shape,
      );
      // Where it stopped: near the start, whatever follows.
      assert.ok(err.line <= 70 && err.column <= 300, `${shape}: line ${err.line}, column ${err.column}`);
    }
  });

  it('reads nesting of 64 levels, as deep as any configuration goes and deeper', () => {
    assert.deepEqual(values(`a: ${'['.repeat(63)}${']'.repeat(63)}\n`).length, 1);
    assert.equal(values(blockMaps(60)).length, 1);
  });

  it('refuses more than 100 aliases in one document at the 101st, and takes 100 in each of several', () => {
    const aliases = (n: number) => `a: &a [x, x]\nb: [${Array.from({ length: n }, () => '*a').join(', ')}]\n`;
    const err = refusal(`${aliases(100)}---\n${aliases(5000)}`);
    assert.deepEqual([err.limit, err.document, err.line], ['aliases', 2, 5]);
    assert.match(err.message, /^uses aliases more than 100 times in one document at line 5, column \d+: refused$/);
    assert.equal(values(`${aliases(100)}---\n${aliases(100)}`).length, 2);
  });

  it('refuses a stream of more documents than its bound, and a document of more tokens, counting each document afresh', () => {
    assert.equal(refusal('---\na: 1\n'.repeat(11), { documents: 10 }).limit, 'documents');
    assert.equal(values('---\na: 1\n'.repeat(10), { documents: 10 }).length, 10);
    const wide = (keys: number) => `{${Array.from({ length: keys }, (_, i) => `k${i}: ${i}`).join(', ')}}\n`;
    const err = refusal(wide(400), { documentTokens: 1000 });
    assert.equal(err.limit, 'documentTokens');
    assert.match(err.message, /^a document holds more than 1000 tokens: split it into documents or files at line 1/);
    assert.equal(values(`${wide(100)}---\n${wide(100)}---\n${wide(100)}`, { documentTokens: 1000 }).length, 3);
  });

  it('refuses a value longer than its bound, plain, quoted or a block', () => {
    const long = 'x'.repeat(101);
    for (const text of [`a: ${long}\n`, `a: "${long}"\n`, `a: '${long}'\n`, `a: |\n  ${long}\n`]) {
      assert.equal(refusal(text, { scalarLength: 100 }).limit, 'scalarLength', text);
    }
    assert.deepEqual(values(`a: ${'x'.repeat(90)}\n`, { scalarLength: 100 }), [{ a: 'x'.repeat(90) }]);
  });

  it('gives the documents of a stream within its bounds as the yaml package does, errors and positions too', () => {
    const text = 'a: 1\n---\n- &x {k: v}\n- *x\n---\nb: [1, 2\n---\n"c": 3\n';
    const ours = [...yamlDocuments(text)];
    const theirs = parseAllDocuments(text);
    assert.deepEqual(
      ours.map((doc) => doc.toJS()),
      theirs.map((doc) => doc.toJS()),
    );
    assert.deepEqual(
      ours.map((doc) => doc.errors.map((e) => e.message)),
      theirs.map((doc) => doc.errors.map((e) => e.message)),
    );
  });

  it('hands on each document once the next begins, so that only one is held while the stream is read', () => {
    const read: unknown[] = [];
    assert.throws(() => {
      for (const doc of yamlDocuments(`a: 1\n---\nb: 2\n---\nc: ${'['.repeat(100)}`))
        read.push(doc.toJS({ maxAliasCount: -1 }));
    }, YamlLimitError);
    // The second was whole when the third began, but a document is handed on only once the one after it is.
    assert.deepEqual(read, [{ a: 1 }]);
  });

  it('refuses a document of millions of tokens at the token past its bound, where reading it whole would', () => {
    const text = longList(1_500_000);
    const err = refusal(text);
    assert.equal(err.limit, 'documentTokens');
    assert.equal(err.document, 1);
    assert.deepEqual(
      { line: err.line, column: err.column },
      placeOfToken(text, DEFAULT_YAML_LIMITS.documentTokens + 1),
    );
  });

  it('refuses an alias or a value past its bound met after the first tokens of a document, at its place', () => {
    const head = longList(LOOK_AHEAD_AFTER / 4);
    const aliases = refusal(`- &a x\n${head}${'- *a\n'.repeat(101)}`);
    assert.equal(aliases.limit, 'aliases');
    assert.deepEqual([aliases.line, aliases.column], [LOOK_AHEAD_AFTER / 4 + 102, 3]);
    const value = refusal(`${head}- "${'y'.repeat(101)}"\n`, { scalarLength: 100 });
    assert.equal(value.limit, 'scalarLength');
    assert.deepEqual([value.line, value.column], [LOOK_AHEAD_AFTER / 4 + 1, 3]);
  });

  it('reads whole the documents longer than the first tokens but within the bound, each counted afresh', () => {
    const items = Math.ceil((DEFAULT_YAML_LIMITS.documentTokens * 0.6) / 5);
    const docs = values(`${longList(items, 'a')}---\n${longList(items, 'b')}`);
    assert.deepEqual(
      docs.map((doc) => [(doc as string[]).length, (doc as string[])[0]]),
      [
        [items, 'a'],
        [items, 'b'],
      ],
    );
  });
});
