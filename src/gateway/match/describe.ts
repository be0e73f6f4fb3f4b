/**
 * @module gateway/match/describe
 * A Mapping's patterns, query conditions, weight and redirect as the diag
 * page, its JSON and `gatehouse check` show them, the same in each.
 */
import type { MappingRecord, QueryValue } from '../config/schema';
import { normalisePath } from '../request/path';
import { runAtOnce, type Steps } from '../slices';
import { groupShares, mappingSharesSteps } from './canary';

/** The match fields of a Mapping that are set, as shown. */
export interface MatchDescription {
  readonly prefix_regex?: true;
  readonly prefix_exact?: true;
  readonly method_regex?: true;
  /** The host is a pattern (shown as the hostname). */
  readonly host_regex?: true;
  readonly regex_headers?: Readonly<Record<string, string>>;
  readonly query_parameters?: Readonly<Record<string, QueryValue>>;
  readonly regex_query_parameters?: Readonly<Record<string, string>>;
  readonly regex_rewrite?: { readonly pattern: string; readonly substitution: string };
  readonly weight?: number;
  /** The percentage of its match's requests it takes, when other Mappings share the match. */
  readonly share?: number;
  /** What it answers with `host_redirect: true` (the host is its `service`). */
  readonly redirect?: {
    readonly response_code: number;
    readonly path_redirect?: string;
    readonly prefix_redirect?: string;
    readonly regex_redirect?: { readonly pattern: string; readonly substitution: string };
  };
}

/** The prefix a Mapping's match is grouped by. */
function prefixOf(mapping: MappingRecord): string {
  if (mapping.prefix_regex === true) return mapping.prefix;
  try {
    return normalisePath(mapping.prefix);
  } catch {
    return mapping.prefix;
  }
}

/** A share (0 to 1) in percent, two decimals at most. */
function percent(share: number): number {
  return Math.round(share * 10_000) / 100;
}

/** The share of each Mapping that shares its match with others, in percent (two decimals at most). */
export function sharesOf(mappings: readonly MappingRecord[]): Map<MappingRecord, number> {
  return runAtOnce(sharesOfSteps(mappings));
}

/** {@link sharesOf}, a step a Mapping (see ../slices). */
export function* sharesOfSteps(mappings: readonly MappingRecord[]): Steps<Map<MappingRecord, number>> {
  const percents = new Map<MappingRecord, number>();
  for (const [mapping, share] of yield* mappingSharesSteps(mappings, prefixOf)) percents.set(mapping, percent(share));
  return percents;
}

/** The share of each member of a group with these weights, in percent, as {@link sharesOf} gives them; undefined when the weights cannot be served. */
export function groupPercents(weights: readonly (number | undefined)[]): number[] | undefined {
  const shares = groupShares(weights);
  return typeof shares === 'string' ? undefined : shares.map(percent);
}

/** Describes the match fields of `m`; `share` is its percentage of a shared match. */
export function describeMatch(m: MappingRecord, share: number | undefined): MatchDescription {
  const copy = <V>(map: Readonly<Record<string, V>> | undefined) =>
    map && Object.keys(map).length > 0 ? { ...map } : undefined;
  const described: { -readonly [K in keyof MatchDescription]: MatchDescription[K] } = {};
  if (m.prefix_regex === true) described.prefix_regex = true;
  if (m.prefix_exact === true) described.prefix_exact = true;
  if (m.method_regex === true && m.method !== undefined) described.method_regex = true;
  if (m.host_regex === true && m.host !== undefined) described.host_regex = true;
  const regexHeaders = copy(m.regex_headers);
  if (regexHeaders) described.regex_headers = regexHeaders;
  const query = copy(m.query_parameters);
  if (query) described.query_parameters = query;
  const regexQuery = copy(m.regex_query_parameters);
  if (regexQuery) described.regex_query_parameters = regexQuery;
  if (m.regex_rewrite) described.regex_rewrite = { ...m.regex_rewrite };
  if (m.weight !== undefined) described.weight = m.weight;
  if (share !== undefined) described.share = share;
  if (m.host_redirect === true) {
    described.redirect = {
      response_code: m.redirect_response_code ?? 301,
      ...(m.path_redirect !== undefined ? { path_redirect: m.path_redirect } : {}),
      ...(m.prefix_redirect !== undefined ? { prefix_redirect: m.prefix_redirect } : {}),
      ...(m.regex_redirect ? { regex_redirect: { ...m.regex_redirect } } : {}),
    };
  }
  return described;
}
