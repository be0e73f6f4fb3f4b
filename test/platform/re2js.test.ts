/**
 * @module test/platform/re2js
 * What src/platform/re2js relies on in re2js, checked against the re2js
 * installed: a compiled pattern's automaton, driven state by state from
 * the start of a text to past its end, answers as `testExact` does.
 */
import { RE2JS } from 're2js';
import { RE2JS_VERSION, wholeTextAutomaton, type Re2jsAutomaton, type Re2jsState } from '../../src/platform';
import { pinnedAt, relies } from './reliance';

const rely = (what: string, holds: boolean, detail?: string) => relies('re2js', RE2JS_VERSION, what, holds, detail);

/** Whether `automaton` takes the whole of `text`, stepped a character at a time. */
function takes(automaton: Re2jsAutomaton, text: string): boolean {
  let state: Re2jsState | null = automaton.start();
  for (const char of text) {
    if (state === null || automaton.threads(state) === 0) return false;
    const rune = char.codePointAt(0)!;
    let cls = 0;
    while (cls < automaton.classBounds.length && automaton.classBounds[cls] <= rune) cls++;
    if (rune <= 255 && automaton.latin1Classes[rune] !== cls) return false;
    state = automaton.step(state, cls, rune);
  }
  if (state === null) return false;
  const end = automaton.step(state, automaton.classes, 0);
  return end !== null && automaton.matched(end);
}

describe('platform/re2js: what Gatehouse relies on in re2js', () => {
  it('is the re2js it was written against', () => pinnedAt('re2js', RE2JS_VERSION));

  it("drives a compiled pattern's whole-text automaton, which answers as testExact does", () => {
    for (const [pattern, texts] of [
      ['/api/v[0-9]+/.*', ['/api/v1/x', '/api/v/x', '/api/v12/', '/web']],
      ['(?i)\\bfoo\\b.*$', ['foo bar', 'FOO', 'foobar', 'a foo']],
      ['(?m)^a$', ['a', 'a\n', 'b']],
      ['\\p{Greek}+x', ['αβx', 'ax', 'x']],
    ] as const) {
      const automaton = wholeTextAutomaton(RE2JS.compile(pattern));
      rely('keeps its compiled pattern and lazily built DFA (re2Input.prog, re2Input.dfa)', automaton !== undefined);
      for (const text of texts) {
        const expected = RE2JS.compile(pattern).testExact(text);
        rely(
          'steps its DFA as before (makeState, step, numClasses, classBounds, latin1Class, isMatch)',
          takes(automaton!, text) === expected,
          `${pattern} on ${JSON.stringify(text)}: testExact says ${expected}`,
        );
      }
      automaton!.release();
    }
  });
});
