/**
 * @module test/gateway/match/substitution
 * A rewrite's searches held to their budget: a pattern is accepted only
 * when its searches can rewrite a whole path of the length it is checked
 * for, and a path past what they may read is refused with a 414, before
 * the search that would pass the budget runs.
 */
import assert from 'node:assert/strict';
import { runAtOnce } from '../../../src/gateway/slices';
import {
  compileSubstitutionSteps,
  isSubstitution,
  MIN_REWRITTEN_LENGTH,
  SEARCH_BASE_STEPS,
  substitute,
  type Substitution,
} from '../../../src/gateway/match/substitution';

const REWRITE = { pattern: '^/r/((x|.)*?)$', substitution: '/to/\\1' };

function compiled(budget: number): Substitution | string {
  const out = runAtOnce(compileSubstitutionSteps(REWRITE, 200, budget));
  return isSubstitution(out) ? out : out.message;
}

/** The status a rewrite of `text` throws, or the rewritten text. */
function rewrite(rewriter: Substitution, text: string): string | number {
  try {
    return substitute(rewriter, text);
  } catch (err) {
    return (err as { status: number }).status;
  }
}

describe('gateway/match/substitution', () => {
  it('accepts a pattern only for a budget within which it rewrites a whole path of the length it is checked for', () => {
    const steps = (compiled(1 << 20) as Substitution).stepsPerCharacter;
    // The budget that just takes a path of that length, whole, and a step less.
    const enough = 2 * SEARCH_BASE_STEPS + (MIN_REWRITTEN_LENGTH + 2) * steps;
    const path = `/r/${'a'.repeat(MIN_REWRITTEN_LENGTH - 3)}`;
    const accepted = compiled(enough);
    assert.ok(typeof accepted !== 'string', accepted as string);
    assert.equal(rewrite(accepted, path), `/to/${path.slice(3)}`);
    assert.equal(rewrite(accepted, `${path}a`), 414);
    assert.match(
      compiled(enough - 1) as string,
      new RegExp(`could rewrite a path of ${MIN_REWRITTEN_LENGTH - 1} characters at most`),
    );
  });

  it('charges every search for the rest of the path, which a thread of higher priority than its match may read', () => {
    const rewriter = runAtOnce(compileSubstitutionSteps({ pattern: 'x.*y|x', substitution: '-' }, 200, 1 << 20));
    assert.ok(isSubstitution(rewriter));
    const few = `/${'x'.repeat(20)}/a`;
    assert.equal(rewrite(rewriter, few), `/${'-'.repeat(20)}/a`);
    // Each search may read to the end: a thousand matches in a path of a thousand characters are past the budget.
    assert.equal(rewrite(rewriter, `/${'x'.repeat(1000)}`), 414);
  });
});
