/**
 * The automaton a pattern is matched by, built whole when the
 * configuration loads, gives re2js's own answer for every text, however
 * the pattern reads it (anchors, word boundaries, case folding, classes
 * beyond Latin-1, characters outside the BMP), and is refused when it
 * would outgrow its bounds.
 */
import assert from 'node:assert/strict';
import { RE2JS } from 're2js';
import { buildAutomaton, WIDE_CHARACTER_STEPS, type Automaton } from '../../../src/gateway/match/automaton';
import { runAtOnce } from '../../../src/gateway/slices';

const PATTERNS = [
  '/.*x',
  '(?i)/api/v[0-9]+/.*',
  '/\\bfoo\\b.*$',
  '(?m)^a$',
  '^/a$',
  '\\Aabc\\z',
  '(?i)straße',
  '[\\pL]+',
  '\\p{Greek}+x',
  '/(a|ab)(c|bcd)(d*)',
  'a*b*c*',
  '',
  'x?',
  '(?s).*',
  '.*',
  '[^a]*',
  '\\B',
  '(?i)k',
  '😀+',
  '[😀-😂]x',
  '(?U)a+',
  'a{2,5}b',
  '[[:alpha:]]+',
  '\\d+\\.\\d+',
  '\\w+\\W',
  '(?i)[a-z]+\\d{2}',
  '/(en|fr)/catalog/[a-z-]+',
];

const PIECES = ['a', 'b', 'c', 'd', 'x', 'X', 'k', 'K', '\u212a', '/', '1', '2', '.', ' ', '\n', 'é', 'ß', 'SS', 'α'];
const MORE = ['😀', '😁', '\ud800', '\udc00', 'api', 'v1', 'foo', 'straße', '_', 'en', 'catalog', '-'];

/** The same texts every run: a linear congruential generator from a fixed seed. */
function texts(count: number): string[] {
  let seed = 12345;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const pieces = [...PIECES, ...MORE];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let text = next(2) === 0 ? '/' : '';
    for (let j = next(9); j > 0; j--) text += pieces[next(pieces.length)];
    out.push(text);
  }
  return out;
}

/** The refusal a build gave, or '' for an automaton. */
function refusal(built: Automaton | string): string {
  return typeof built === 'string' ? built : '';
}

function built(pattern: string): Automaton {
  const automaton = runAtOnce(buildAutomaton(RE2JS.compile(pattern)));
  assert.ok(typeof automaton !== 'string', `${pattern}: ${typeof automaton === 'string' ? automaton : ''}`);
  return automaton;
}

describe('gateway/match/automaton', () => {
  it("answers as re2js's testExact does for every pattern and text tried", () => {
    const tried = texts(3000);
    for (const pattern of PATTERNS) {
      const automaton = built(pattern);
      const reference = RE2JS.compile(pattern);
      for (const text of tried)
        assert.equal(automaton.matches(text), reference.testExact(text), `${pattern} ${JSON.stringify(text)}`);
    }
  });

  it('reads a text only up to where no match can follow, and all of it and its end otherwise', () => {
    const automaton = built('/api/.*');
    assert.equal(automaton.read('/web/x') >>> 1, 2);
    assert.equal(automaton.read('/api/x') >>> 1, '/api/x'.length + 1);
    assert.equal(automaton.read('/api/x') & 1, 1);
  });

  it('counts a character beyond Latin-1 as sixteen, its class found by a search rather than a table', () => {
    const automaton = built('(?i)\\pL*');
    assert.equal(automaton.read('éé') >>> 1, 3);
    assert.equal(automaton.read('жж') >>> 1, 3 + 2 * (WIDE_CHARACTER_STEPS - 1));
    assert.equal(automaton.read('😀') & 1, 0);
  });

  it('refuses, saying why, a pattern whose states multiply past the bound, and within a small bound one that fits the default', () => {
    assert.match(
      refusal(runAtOnce(buildAutomaton(RE2JS.compile('.*a.{14}')))),
      /^needs an automaton of more than 4096 states/,
    );
    assert.match(
      refusal(runAtOnce(buildAutomaton(RE2JS.compile('(?i)[a-z]+/\\d+'), { states: 2, work: 1000 }))),
      /^needs/,
    );
  });

  it('builds a step at a time, a few thousand instructions visited between two', () => {
    const steps = buildAutomaton(RE2JS.compile(`/${'.*a'.repeat(40)}`));
    let yields = 0;
    for (let step = steps.next(); !step.done; step = steps.next()) yields++;
    assert.ok(yields > 1, `${yields} steps`);
  });
});
