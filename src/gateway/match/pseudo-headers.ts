/**
 * @module gateway/match/pseudo-headers
 * A Mapping's `headers` and `regex_headers` on the request's pseudo-headers
 * (`:authority`, `:method`, `:path`, `:scheme`), as Envoy matches them,
 * each read from what the gateway routes on, so that no spelling of a
 * request routes apart from its normal form: `:authority` is the host's
 * normal form (lower case, no port), `:path` the normalised path with the
 * query, `:method` the method a route is chosen by.
 */
import type { MappingRecord } from '../config/schema';
import type { Steps } from '../slices';
import type { MatchMeter, Pattern } from './regex';

/** What one pseudo-header condition asks: an exact value, any value (`true`), or a pattern of the whole value. */
export interface PseudoCondition {
  readonly name: string;
  readonly exact: string | true | null;
  readonly pattern: Pattern | null;
}

/** What a request gives its pseudo-headers: read once however many routes ask. */
export interface PseudoFacts {
  readonly method: string;
  /** The normalised path the route is matched on. */
  readonly path: string;
  /** The raw query string, without `?`. */
  readonly query: string;
  readonly scheme: string;
  /** The host's normal form, '' for none. */
  hostName(): string;
}

/** Whether a `headers` or `regex_headers` name is a pseudo-header (a header name holds no colon). */
export function namesPseudoHeader(name: string): boolean {
  return name.charCodeAt(0) === 58;
}

/**
 * The pseudo-header conditions of a Mapping: exact ones from `headers`,
 * patterns from `regex_headers` (compiled by `compile`, which says its own
 * problems); empty when it has none.
 */
export function* pseudoConditionsSteps(
  mapping: MappingRecord,
  compile: (pattern: string, path: string) => Steps<Pattern | null>,
): Steps<PseudoCondition[]> {
  const out: PseudoCondition[] = [];
  for (const [name, value] of Object.entries(mapping.headers ?? {})) {
    if (namesPseudoHeader(name)) out.push({ name, exact: value, pattern: null });
  }
  for (const [name, pattern] of Object.entries(mapping.regex_headers ?? {})) {
    if (!namesPseudoHeader(name)) continue;
    const re = yield* compile(pattern, `regex_headers.${name}`);
    if (re !== null) out.push({ name, exact: null, pattern: re });
  }
  return out;
}

/** A pseudo-header's value for a request; undefined for a `:authority` it does not have. */
function pseudoValue(name: string, facts: PseudoFacts): string | undefined {
  switch (name) {
    case ':authority': {
      const host = facts.hostName();
      return host === '' ? undefined : host;
    }
    case ':method':
      return facts.method;
    case ':path':
      return facts.query === '' ? facts.path : `${facts.path}?${facts.query}`;
    default:
      return facts.scheme;
  }
}

/** Whether a request meets every pseudo-header condition; patterns are counted by `meter` (`:path` as the URL). */
export function pseudoMatches(conditions: readonly PseudoCondition[], facts: PseudoFacts, meter: MatchMeter): boolean {
  for (let i = 0; i < conditions.length; i++) {
    const c = conditions[i];
    const value = pseudoValue(c.name, facts);
    if (value === undefined) return false;
    if (
      c.pattern !== null
        ? !c.pattern.testExact(value, meter, c.name === ':path' ? 'url' : 'header')
        : c.exact !== true && c.exact !== value
    )
      return false;
  }
  return true;
}

/** Whether a route's pseudo-header conditions ask about the method, so that the method may decide its match. */
export function asksMethod(conditions: readonly PseudoCondition[] | null | undefined): boolean {
  return conditions?.some((c) => c.name === ':method') === true;
}
