/**
 * @module gateway/match/conditions
 * What a Mapping asks of a request beyond a path prefix, one method, exact
 * headers and a host glob: a path pattern (`prefix_regex`), a method
 * pattern, header patterns, a host pattern, query arguments. Compiled once
 * when the configuration loads, with its `regex_rewrite`, each problem
 * named by its field; a Mapping that asks none of them compiles to `null`,
 * so that the route table does no work for them on its requests.
 *
 * Every pattern matches a whole text, as Envoy's matchers do: the
 * normalised path (the spelling prefixes are matched on, so that no other
 * spelling of a path reaches a pattern's Mapping), the method, a header's
 * value (decoded from UTF-8 as Envoy reads its bytes), the host (lower
 * case, without port or trailing dot: no spelling of a host routes
 * elsewhere than its bare name), an argument's decoded value.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { headerText } from '../../http';
import type { MappingRecord } from '../config/schema';
import { canonicalIPv6 } from './host-match';
import { runAtOnce, type Steps } from '../slices';
import { ParsedQuery, queryMatches, type QueryCondition, type QueryReading } from './query';
import { createMatchMeter, createPatternCompiler, type MatchMeter, type Pattern, type PatternCompiler } from './regex';
import {
  namesPseudoHeader,
  pseudoConditionsSteps,
  pseudoMatches,
  type PseudoCondition,
  type PseudoFacts,
} from './pseudo-headers';
import { compileSubstitutionSteps, isSubstitution, type Substitution } from './substitution';

/** A Mapping's conditions beyond prefix, method, headers and host glob; at least one is set. */
export interface MatchConditions {
  /** `prefix_regex`: the pattern the whole normalised path must match. */
  readonly path: Pattern | null;
  /** `method_regex`: the pattern the whole method must match. */
  readonly method: Pattern | null;
  /** `regex_headers`: each header's name (lower case) and the pattern its whole value must match. */
  readonly headers: readonly (readonly [string, Pattern])[] | null;
  /** `host` with `host_regex`: the pattern the whole host (its normal form) must match. */
  readonly host: Pattern | null;
  /** `query_parameters` and `regex_query_parameters`. */
  readonly query: readonly QueryCondition[] | null;
  /** `headers` and `regex_headers` on `:authority`, `:method`, `:path` and `:scheme`. */
  readonly pseudo: readonly PseudoCondition[] | null;
}

/** One problem of a Mapping's patterns, at its field path. */
export interface PatternProblem {
  readonly path: string;
  readonly message: string;
}

/** A Mapping's patterns, compiled. */
export interface CompiledPatterns {
  /** Null when the Mapping asks nothing beyond prefix, method, headers and host glob. */
  readonly conditions: MatchConditions | null;
  /** `regex_rewrite`, when given. */
  readonly pathRewrite: Substitution | null;
  readonly problems: readonly PatternProblem[];
}

/**
 * Compiles the patterns of a Mapping under the limits of `compiler` (the
 * Module's `regex_max_size` among them), a step every millisecond or so of
 * building (see ../slices).
 */
export function* compilePatternsSteps(mapping: MappingRecord, compiler: PatternCompiler): Steps<CompiledPatterns> {
  const problems: PatternProblem[] = [];
  function* compile(pattern: string, path: string): Steps<Pattern | null> {
    const compiled = yield* compiler.compile(pattern);
    if (typeof compiled !== 'string') return compiled;
    problems.push({ path, message: compiled });
    return null;
  }
  const path = mapping.prefix_regex === true ? yield* compile(mapping.prefix, 'prefix') : null;
  const method =
    mapping.method !== undefined && mapping.method_regex === true ? yield* compile(mapping.method, 'method') : null;
  const host = mapping.host !== undefined && mapping.host_regex === true ? yield* compile(mapping.host, 'host') : null;
  const headers: (readonly [string, Pattern])[] = [];
  for (const [name, pattern] of Object.entries(mapping.regex_headers ?? {})) {
    if (namesPseudoHeader(name)) continue;
    const re = yield* compile(pattern, `regex_headers.${name}`);
    if (re !== null) headers.push([name, re]);
  }
  const query: QueryCondition[] = [];
  for (const [name, value] of Object.entries(mapping.query_parameters ?? {})) {
    query.push(value === true ? { name, present: true } : { name, exact: value });
  }
  for (const [name, pattern] of Object.entries(mapping.regex_query_parameters ?? {})) {
    const re = yield* compile(pattern, `regex_query_parameters.${name}`);
    if (re !== null) query.push({ name, pattern: re });
  }
  let pathRewrite: Substitution | null = null;
  if (mapping.regex_rewrite !== undefined) {
    const compiled = yield* compileSubstitutionSteps(mapping.regex_rewrite, compiler.maxSize);
    if (isSubstitution(compiled)) pathRewrite = compiled;
    else problems.push({ path: `regex_rewrite.${compiled.field}`, message: compiled.message });
  }
  const pseudo = yield* pseudoConditionsSteps(mapping, compile);
  const any =
    path !== null || method !== null || host !== null || headers.length > 0 || query.length > 0 || pseudo.length > 0;
  return {
    conditions: any
      ? {
          path,
          method,
          headers: headers.length > 0 ? headers : null,
          host,
          query: query.length > 0 ? query : null,
          pseudo: pseudo.length > 0 ? pseudo : null,
        }
      : null,
    pathRewrite,
    problems,
  };
}

/** {@link compilePatternsSteps} at once, by default under the default limits. */
export function compilePatterns(
  mapping: MappingRecord,
  compiler: PatternCompiler = createPatternCompiler(),
): CompiledPatterns {
  return runAtOnce(compilePatternsSteps(mapping, compiler));
}

/**
 * The host's normal form a host pattern sees: lower case, without port and
 * trailing dot, an IPv6 address in its one spelling (`[::1]`, not
 * `[0:0::1]`); '' for none.
 */
function normalHost(host: string | undefined): string {
  if (host === undefined || host === '') return '';
  if (host.charCodeAt(0) === 91) return canonicalIPv6(host.slice(0, host.indexOf(']') + 1)) ?? '';
  const colon = host.lastIndexOf(':');
  let end = colon >= 0 ? colon : host.length;
  if (end > 1 && host.charCodeAt(end - 1) === 46) end--;
  return host.slice(0, end).toLowerCase();
}

/**
 * What the conditions read of one request beyond its path, method and
 * headers, worked out at most once however many routes ask: the route
 * table keeps one and resets it for each match (matching is synchronous).
 */
export class RequestReading implements PseudoFacts {
  /** The raw query string, without `?`. */
  query = '';
  private host: string | undefined;
  /** The method, normalised path and scheme of the request, for its pseudo-headers. */
  method = '';
  path = '';
  scheme = 'http';
  /** How the query is read: Envoy's reading, or another backend's. */
  queryReading: QueryReading = 'first';
  private parsed: ParsedQuery | null = null;
  private normal: string | null = null;
  /** The headers whose values are decoded in `decoded`, and those values, by name. */
  private headers: IncomingHttpHeaders | null = null;
  private readonly decoded = new Map<string, string | undefined>();
  /** What the patterns read for one routing decision, counted against its budget. */
  readonly meter: MatchMeter;

  constructor(meter: MatchMeter = createMatchMeter()) {
    this.meter = meter;
  }

  /** Starts reading another request. Allocates nothing. */
  reset(query: string, host: string | undefined, queryReading: QueryReading, path: string, scheme: string): void {
    this.path = path;
    this.scheme = scheme;
    if (query !== this.query) {
      this.query = query;
      this.parsed = null;
    }
    if (host !== this.host) {
      this.host = host;
      this.normal = null;
    }
    this.queryReading = queryReading;
  }

  /** The query, decoded (parsed once per query string). */
  parsedQuery(): ParsedQuery {
    return (this.parsed ??= new ParsedQuery(this.query));
  }

  /** The host's normal form. */
  hostName(): string {
    return (this.normal ??= normalHost(this.host));
  }

  /** Starts another routing decision: its meter, and the header values decoded for it, start afresh. */
  restart(): void {
    this.meter.restart();
    this.headers = null;
  }

  /**
   * The value of header `name` as a pattern reads it (decoded from UTF-8),
   * decoded once a routing decision however many routes ask: decoding
   * reads the whole value, and a thousand routes would read it a thousand
   * times, uncounted.
   */
  headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
    if (headers !== this.headers) {
      this.headers = headers;
      this.decoded.clear();
    }
    if (this.decoded.has(name)) return this.decoded.get(name);
    const raw = headers[name];
    const value = raw === undefined ? undefined : headerText(typeof raw === 'string' ? raw : raw.join(', '));
    this.decoded.set(name, value);
    return value;
  }
}

/** Whether a request meets the conditions other than the path pattern (which the route table holds itself). */
export function conditionsMatch(
  c: MatchConditions,
  method: string,
  headers: IncomingHttpHeaders,
  reading: RequestReading,
): boolean {
  const meter = reading.meter;
  if (c.method !== null && !c.method.testExact(method, meter, 'header')) return false;
  if (c.pseudo !== null) {
    reading.method = method;
    if (!pseudoMatches(c.pseudo, reading, meter)) return false;
  }
  if (c.headers !== null) {
    for (let i = 0; i < c.headers.length; i++) {
      const value = reading.headerValue(headers, c.headers[i][0]);
      if (value === undefined || !c.headers[i][1].testExact(value, meter, 'header')) return false;
    }
  }
  if (c.host !== null) {
    const host = reading.hostName();
    if (host === '' || !c.host.testExact(host, meter, 'header')) return false;
  }
  return c.query === null || queryMatches(c.query, reading.parsedQuery(), reading.queryReading, meter);
}
