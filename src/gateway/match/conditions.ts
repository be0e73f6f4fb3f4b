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
import { ParsedQuery, queryMatches, type QueryCondition, type QueryReading } from './query';
import { compileRegex, DEFAULT_REGEX_MAX_SIZE, type RE2JS } from './regex';
import {
  namesPseudoHeader,
  pseudoConditions,
  pseudoMatches,
  type PseudoCondition,
  type PseudoFacts,
} from './pseudo-headers';
import { compileSubstitution, isSubstitution, type Substitution } from './substitution';

/** A Mapping's conditions beyond prefix, method, headers and host glob; at least one is set. */
export interface MatchConditions {
  /** `prefix_regex`: the pattern the whole normalised path must match. */
  readonly path: RE2JS | null;
  /** `method_regex`: the pattern the whole method must match. */
  readonly method: RE2JS | null;
  /** `regex_headers`: each header's name (lower case) and the pattern its whole value must match. */
  readonly headers: readonly (readonly [string, RE2JS])[] | null;
  /** `host` with `host_regex`: the pattern the whole host (its normal form) must match. */
  readonly host: RE2JS | null;
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

/** Compiles the patterns of a Mapping, each program held to `maxSize` instructions. */
export function compilePatterns(mapping: MappingRecord, maxSize: number = DEFAULT_REGEX_MAX_SIZE): CompiledPatterns {
  const problems: PatternProblem[] = [];
  const compile = (pattern: string, path: string): RE2JS | null => {
    const re = compileRegex(pattern, maxSize);
    if (typeof re !== 'string') return re;
    problems.push({ path, message: re });
    return null;
  };
  const path = mapping.prefix_regex === true ? compile(mapping.prefix, 'prefix') : null;
  const method =
    mapping.method !== undefined && mapping.method_regex === true ? compile(mapping.method, 'method') : null;
  const host = mapping.host !== undefined && mapping.host_regex === true ? compile(mapping.host, 'host') : null;
  const headers: (readonly [string, RE2JS])[] = [];
  for (const [name, pattern] of Object.entries(mapping.regex_headers ?? {})) {
    if (namesPseudoHeader(name)) continue;
    const re = compile(pattern, `regex_headers.${name}`);
    if (re !== null) headers.push([name, re]);
  }
  const query: QueryCondition[] = [];
  for (const [name, value] of Object.entries(mapping.query_parameters ?? {})) {
    query.push(value === true ? { name, present: true } : { name, exact: value });
  }
  for (const [name, pattern] of Object.entries(mapping.regex_query_parameters ?? {})) {
    const re = compile(pattern, `regex_query_parameters.${name}`);
    if (re !== null) query.push({ name, pattern: re });
  }
  let pathRewrite: Substitution | null = null;
  if (mapping.regex_rewrite !== undefined) {
    const compiled = compileSubstitution(mapping.regex_rewrite, maxSize);
    if (isSubstitution(compiled)) pathRewrite = compiled;
    else problems.push({ path: `regex_rewrite.${compiled.field}`, message: compiled.message });
  }
  const pseudo = pseudoConditions(mapping, compile);
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
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return headerText(typeof value === 'string' ? value : value.join(', '));
}

/** Whether a request meets the conditions other than the path pattern (which the route table holds itself). */
export function conditionsMatch(
  c: MatchConditions,
  method: string,
  headers: IncomingHttpHeaders,
  reading: RequestReading,
): boolean {
  if (c.method !== null && !c.method.testExact(method)) return false;
  if (c.pseudo !== null) {
    reading.method = method;
    if (!pseudoMatches(c.pseudo, reading)) return false;
  }
  if (c.headers !== null) {
    for (let i = 0; i < c.headers.length; i++) {
      const value = headerValue(headers, c.headers[i][0]);
      if (value === undefined || !c.headers[i][1].testExact(value)) return false;
    }
  }
  if (c.host !== null) {
    const host = reading.hostName();
    if (host === '' || !c.host.testExact(host)) return false;
  }
  return c.query === null || queryMatches(c.query, reading.parsedQuery(), reading.queryReading);
}
