/**
 * @module gateway/match/canary
 * Canary releases, as Emissary has them: Mappings with the same match (the
 * same precedence, path, method, headers, host and query conditions) form a
 * group, and a request of that match goes to one of them at random, each
 * taking the share its `weight` says (0 to 100); those without a weight
 * share what is left equally. A group is refused when its weights add up to
 * more than 100, as Emissary refuses it. Where Emissary lets a group whose
 * weights all are given and add up to less than 100 pass the rest on to
 * whatever Mapping comes next, the gateway reads them as proportions (10
 * and 30 take a quarter and three quarters): Emissary documents a group's
 * weights as always adding up to 100.
 *
 * A group must agree on what decides about a request rather than where it
 * goes: `bypass_auth` and `labels` (as Emissary requires), so that a weight
 * never decides whether a request is authenticated or rate-limited; a
 * redirect shares its match with no other Mapping (as in Emissary).
 */
import type { MappingRecord } from '../config/schema';
import type { Steps } from '../slices';

/** A group of routes sharing one match, and the bounds that split [0, 1) among them. */
export class WeightGroup<R> {
  readonly members: R[] = [];
  /** Cumulative shares, the last one 1: member i takes a draw below bounds[i] and not below bounds[i - 1]. */
  bounds = new Float64Array(0);

  /** The member a random draw in [0, 1) chooses. Allocates nothing. */
  pick(draw: number): R {
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length - 1; i++) if (draw < bounds[i]) return this.members[i];
    return this.members[bounds.length - 1];
  }
}

/** What decides that two Mappings have the same match. */
export function matchKey(mapping: MappingRecord, prefix: string): string {
  const sorted = (map: Readonly<Record<string, unknown>> | undefined) =>
    map ? Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : [];
  const regex = mapping.prefix_regex === true;
  const hostname = mapping.hostname ?? (mapping.host_regex === true ? undefined : mapping.host);
  return JSON.stringify([
    mapping.precedence,
    regex ? 'regex' : mapping.prefix_exact === true ? 'exact' : 'prefix',
    regex ? mapping.prefix : prefix,
    regex || mapping.case_sensitive,
    mapping.method ?? null,
    mapping.method_regex === true,
    sorted(mapping.headers),
    sorted(mapping.regex_headers),
    hostname === undefined || hostname === '*' ? null : hostname,
    mapping.host_regex === true ? mapping.host : null,
    sorted(mapping.query_parameters),
    sorted(mapping.regex_query_parameters),
  ]);
}

/**
 * Each weight's share of its group's requests (adding up to 1), or why the
 * weights cannot be served.
 */
export function groupShares(weights: readonly (number | undefined)[]): number[] | string {
  if (weights.length === 1) return [1];
  let given = 0;
  let unweighted = 0;
  for (const w of weights) {
    if (w === undefined) unweighted++;
    else given += w;
  }
  if (given > 100) return `the weights of the Mappings with this match add up to ${given}, over 100`;
  if (unweighted > 0) return weights.map((w) => (w === undefined ? (100 - given) / unweighted : w) / 100);
  if (given === 0) return 'the weights of the Mappings with this match are all 0: none of them would take its requests';
  return weights.map((w) => w! / given);
}

/** Sets a group's bounds from its members' weights, which must be servable. */
export function settleGroup<R>(group: WeightGroup<R>, weightOf: (member: R) => number | undefined): void {
  const shares = groupShares(group.members.map(weightOf));
  if (typeof shares === 'string') throw new Error(shares);
  const bounds = new Float64Array(shares.length);
  let sum = 0;
  shares.forEach((share, i) => (bounds[i] = sum += share));
  bounds[bounds.length - 1] = 1;
  group.bounds = bounds;
}

/** The Mappings grouped by match, in config order, a step a Mapping (see ../slices). */
function* sameMatchSteps(
  mappings: readonly MappingRecord[],
  prefixOf: (mapping: MappingRecord) => string,
): Steps<MappingRecord[][]> {
  const groups = new Map<string, MappingRecord[]>();
  for (const mapping of mappings) {
    const key = matchKey(mapping, prefixOf(mapping));
    const members = groups.get(key);
    if (members === undefined) groups.set(key, [mapping]);
    else members.push(mapping);
    yield;
  }
  return [...groups.values()];
}

/** A problem of a group, on one of its Mappings. */
export interface GroupProblem {
  readonly mapping: MappingRecord;
  readonly path: string;
  readonly message: string;
}

/**
 * What is wrong with the groups Mappings form (each given with its
 * normalised prefix), a step a Mapping and a group (see ../slices).
 */
export function* groupProblemsSteps(
  entries: readonly { readonly mapping: MappingRecord; readonly prefix: string }[],
): Steps<GroupProblem[]> {
  const groups = new Map<string, MappingRecord[]>();
  for (const { mapping, prefix } of entries) {
    const key = matchKey(mapping, prefix);
    const members = groups.get(key);
    if (members === undefined) groups.set(key, [mapping]);
    else members.push(mapping);
    yield;
  }
  const problems: GroupProblem[] = [];
  for (const members of groups.values()) {
    yield;
    if (members.length < 2) continue;
    const [first, ...rest] = members;
    const same = `Mapping '${first.name}', which has the same match`;
    for (const m of rest) {
      if (m.host_redirect === true || first.host_redirect === true) {
        problems.push({
          mapping: m,
          path: 'host_redirect',
          message: `a redirect shares its match with no other Mapping, and ${same} is ${first.host_redirect === true ? 'one' : 'not one'}`,
        });
      }
      if (m.bypass_auth !== first.bypass_auth) {
        problems.push({
          mapping: m,
          path: 'bypass_auth',
          message: `differs from ${same}: the weight split would decide whether a request is authenticated`,
        });
      }
      if (JSON.stringify(m.labels ?? {}) !== JSON.stringify(first.labels ?? {})) {
        problems.push({
          mapping: m,
          path: 'labels',
          message: `differ from those of ${same}: Mappings sharing a match share their labels, as in Emissary`,
        });
      }
    }
    const shares = groupShares(members.map((m) => m.weight));
    if (typeof shares === 'string') {
      for (const m of members)
        if (m.weight !== undefined) problems.push({ mapping: m, path: 'weight', message: shares });
    }
  }
  return problems;
}

/**
 * The share (0 to 1) each Mapping takes of the requests of its match, for
 * those that share a match with others; `prefixOf` gives a Mapping's
 * normalised prefix. A step a Mapping and a group: working out the match
 * of 30 000 Mappings holds the event loop for a tenth of a second.
 */
export function* mappingSharesSteps(
  mappings: readonly MappingRecord[],
  prefixOf: (mapping: MappingRecord) => string,
): Steps<Map<MappingRecord, number>> {
  const shares = new Map<MappingRecord, number>();
  for (const members of yield* sameMatchSteps(mappings, prefixOf)) {
    yield;
    if (members.length < 2) continue;
    const split = groupShares(members.map((m) => m.weight));
    if (typeof split !== 'string') members.forEach((m, i) => shares.set(m, split[i]));
  }
  return shares;
}
