/**
 * @module gateway/match/prepare
 * What the runtime works out of a Mapping's match before it builds routes:
 * its prefix in the normal form requests are matched in (a pattern is kept
 * as written), its patterns compiled under the configuration's limits (the
 * Module's `regex_max_size` among them), its redirect, and every problem of
 * them with its field.
 */
import type { MappingRecord } from '../config/schema';
import { normalisePath, unsafeEscape, withoutParameters } from '../request/path';
import type { Steps } from '../slices';
import { compilePatternsSteps, type CompiledPatterns, type PatternProblem } from './conditions';
import { isRedirectPlan, redirectPlanSteps, type RedirectPlan } from './redirect';
import type { PatternCompiler } from './regex';

/** A Mapping's match, ready for the route table. */
export interface PreparedMatch {
  /** The normalised prefix, or the pattern of `prefix_regex`. */
  readonly prefix: string;
  readonly patterns: CompiledPatterns;
  /** Its redirect, for `host_redirect: true`. */
  readonly redirect: RedirectPlan | null;
  readonly problems: readonly PatternProblem[];
}

/** Prepares a Mapping's match, its patterns compiled by `compiler`, a step every millisecond or so of it (see ../slices). */
export function* prepareMatchSteps(mapping: MappingRecord, compiler: PatternCompiler): Steps<PreparedMatch> {
  const problems: PatternProblem[] = [];
  let prefix = mapping.prefix;
  if (mapping.prefix_regex !== true) {
    try {
      prefix = normalisePath(mapping.prefix);
      // Every request it matched would be refused: its form without them routes elsewhere.
      if (withoutParameters(prefix) !== prefix) {
        problems.push({
          path: 'prefix',
          message: `'${mapping.prefix}' holds ;parameters, which Tomcat, Spring and JAX-RS backends drop: a request would be routed by what its backend does not see`,
        });
      }
      const unsafe = mapping.allow_unsafe_path_escapes ? undefined : unsafeEscape(prefix);
      if (unsafe !== undefined) {
        problems.push({
          path: 'prefix',
          message: `'${mapping.prefix}' would have every request it matched refused: ${unsafe} (allow_unsafe_path_escapes: true lets them through)`,
        });
      }
    } catch (err) {
      problems.push({
        path: 'prefix',
        message: `'${mapping.prefix}' is not a usable path: ${(err as { detail?: string }).detail ?? String(err)}`,
      });
    }
  }
  const patterns = yield* compilePatternsSteps(mapping, compiler);
  problems.push(...patterns.problems);
  let redirect: RedirectPlan | null = null;
  if (mapping.host_redirect === true) {
    const plan = yield* redirectPlanSteps(mapping, compiler.maxSize);
    if (isRedirectPlan(plan)) redirect = plan;
    else problems.push(plan);
  }
  return { prefix, patterns, redirect, problems };
}
