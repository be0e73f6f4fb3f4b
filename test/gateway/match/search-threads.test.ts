/**
 * The most threads of a program a search runs at once, read from the
 * automaton of the search: what each character a rewrite's search reads
 * costs, far below the program's size for a pattern of many alternatives,
 * and nothing (the size bounds it then) for one whose states outgrow their
 * bounds.
 */
import assert from 'node:assert/strict';
import { RE2JS } from 're2js';
import { searchThreadsSteps } from '../../../src/gateway/match/search-threads';
import { runAtOnce } from '../../../src/gateway/slices';

const threadsOf = (pattern: string, limits?: { states: number; work: number }) =>
  runAtOnce(searchThreadsSteps(RE2JS.compile(pattern), limits));

describe('gateway/match/search-threads', () => {
  it('reads a few dozen threads for a pattern of hundreds of alternatives, whose program holds thousands of instructions', () => {
    const words = Array.from({ length: 300 }, (_, i) => `w${i.toString(36)}abc`);
    const pattern = `^/(${words.join('|')})/(.*)$`;
    const threads = threadsOf(pattern);
    assert.ok(threads !== undefined && threads < 150, `${threads} threads`);
    assert.ok(RE2JS.compile(pattern).programSize() > 1000);
  });

  it('reads about the whole program for one whose every part can be under way at once', () => {
    const pattern = `^/r/(${'(x|.)*?'.repeat(20)})$`;
    const size = RE2JS.compile(pattern).programSize();
    const threads = threadsOf(pattern)!;
    assert.ok(threads > size * 0.9 && threads <= size, `${threads} threads, ${size} instructions`);
  });

  it('counts the threads past an empty-width condition, whichever character comes next would meet it', () => {
    const past = threadsOf('xa\\b(?:b1|c2|d3|e4|f5|g6|h7)')!;
    const before = threadsOf('xa\\b')!;
    assert.ok(past >= before + 7, `${past} threads with the alternatives after \\b, ${before} without`);
  });

  it('reads nothing when the states of the search outgrow the bounds', () => {
    assert.equal(threadsOf('.*a.{12}', { states: 64, work: 1 << 19 }), undefined);
    assert.equal(threadsOf(`/${'.*a'.repeat(20)}`, { states: 4096, work: 100 }), undefined);
  });

  it('reads a step at a time, some thousands of threads visited between two', () => {
    const steps = searchThreadsSteps(RE2JS.compile(`/(${'.*a'.repeat(30)})`));
    let yields = 0;
    for (let step = steps.next(); !step.done; step = steps.next()) yields++;
    assert.ok(yields > 1, `${yields} steps`);
  });
});
