/**
 * @module test/platform/re2js
 * What src/platform/re2js relies on in re2js, checked against the re2js
 * installed: a compiled pattern's automaton, driven state by state from
 * the start of a text to past its end, answers as `testExact` does; and
 * stepped as a search, it finds what `test` finds, its states holding the
 * threads of the program.
 */
import { RE2JS } from 're2js';
import {
  RE2JS_VERSION,
  searchAutomaton,
  wholeTextAutomaton,
  type Re2jsAutomaton,
  type Re2jsSearchAutomaton,
  type Re2jsState,
} from '../../src/platform';
import { pinnedAt, relies } from '../support/reliance';

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

/** Whether a search by `automaton` finds a match in `text`, stepped a character at a time from the text's start. */
function finds(automaton: Re2jsSearchAutomaton, text: string): boolean {
  let state: Re2jsState | null = automaton.starts()[0];
  for (const char of text) {
    if (state === null) return false;
    if (automaton.matched(state)) return true;
    const rune = char.codePointAt(0)!;
    let cls = 0;
    while (cls < automaton.classBounds.length && automaton.classBounds[cls] <= rune) cls++;
    state = automaton.step(state, cls, rune);
  }
  if (state === null) return false;
  if (automaton.matched(state)) return true;
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

  it('steps the same automaton as a search, which finds what test finds, its states holding threads of the program', () => {
    for (const [pattern, texts] of [
      ['a+b', ['xxaab', 'ab', 'ba', '']],
      ['\\bfoo$', ['a foo', 'afoo', 'foo\n', 'foo']],
      ['(?m)^x', ['a\nx', 'ax']],
      ['^/api/(v1|v2)/', ['/api/v2/x', 'x/api/v1/']],
      ['(x|.)*?(y)', ['aaay', 'aaa']],
    ] as const) {
      const re = RE2JS.compile(pattern);
      const search = searchAutomaton(re);
      rely(
        'keeps its compiled pattern and lazily built DFA (re2Input.prog, re2Input.dfa, dfa.closure)',
        search !== undefined,
      );
      const starts = search!.starts();
      rely('makes the states a search starts in (makeState)', starts.length === 4 && starts.every((s) => s !== null));
      for (const start of starts) {
        const threads = search!.threads(start!);
        rely(
          'holds the threads of the program in a state (nfaStates, closure)',
          threads >= 1 && threads <= re.programSize(),
          `${pattern}: ${threads} threads, ${re.programSize()} instructions`,
        );
      }
      for (const text of texts) {
        const expected = re.test(text);
        rely(
          'steps its DFA as a search (step with RE2Flags.UNANCHORED, isMatch)',
          finds(search!, text) === expected,
          `${pattern} on ${JSON.stringify(text)}: test says ${expected}`,
        );
      }
      search!.release();
    }
  });
});
