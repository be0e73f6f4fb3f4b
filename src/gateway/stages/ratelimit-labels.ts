/**
 * @module gateway/stages/ratelimit-labels
 * A Mapping's labels as the descriptors the rate-limit service is asked
 * about, filled in as Envoy's rate-limit actions fill them: a header's
 * value (or a pseudo-header's: `:authority`, `:method`, `:path`,
 * `:scheme`), a literal (`generic_key`), the client's address
 * (`remote_address`), the gateway's own cluster name (`source_cluster`)
 * and the cluster the request goes to (`destination_cluster`).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { headerText } from '../../http';
import type { DescriptorEntry, RateLimitDescriptor } from '../../ratelimit';
import { groupLabels, isPseudoHeader, readLabel, type LabelSource, type MappingRecord } from '../config/schema';

/** The label groups of one Mapping for one domain, read once. */
export interface LabelPlan {
  readonly groups: readonly (readonly LabelSource[])[];
  /** Whether a label wants {@link LabelFacts}: the client's address, a cluster name or a pseudo-header. */
  readonly facts: boolean;
}

/** What the labels other than headers and literals are filled with, for one request. */
export interface LabelFacts {
  /** The client's address, as the gateway trusts it (see gateway/request/headers/forwarded). */
  readonly remoteAddress: string;
  /** The gateway's own name, as Envoy's `--service-cluster`. */
  readonly sourceCluster: string;
  /** Where the request goes: the cluster of a remote upstream (`cluster_quote_shop`), else the Mapping's `service`. */
  readonly destinationCluster: string;
  /** `:method`. */
  readonly method: string;
  /** `:path`: the path as the gateway routed it (normalised), with the query. */
  readonly path: string;
  /** `:scheme`: `http` or `https`. */
  readonly scheme: string;
}

/** Reads the label groups of `mapping` under `domain`; null when it has none. */
export function labelPlan(mapping: Pick<MappingRecord, 'labels'>, domain: string): LabelPlan | null {
  const groups = mapping.labels?.[domain];
  if (!groups?.length) return null;
  const read = groups.map((group) => groupLabels(group).map(readLabel));
  const wantsFacts = (l: LabelSource) => (l.kind === 'header' ? isPseudoHeader(l.header) : l.kind !== 'literal');
  return { groups: read, facts: read.some((labels) => labels.some(wantsFacts)) };
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  if (v === undefined || v === '') return undefined;
  // Envoy sends a value's bytes: a UTF-8 name (`josé`) must match the limit written for it.
  return headerText(typeof v === 'string' ? v : v.join(', '));
}

/** A pseudo-header's value, as Envoy gives it: `:authority` is the Host header. */
function pseudoHeaderValue(
  name: string,
  headers: IncomingHttpHeaders,
  facts: LabelFacts | undefined,
): string | undefined {
  switch (name) {
    case ':authority':
      return headerValue(headers, 'host');
    case ':method':
      return facts?.method;
    case ':path':
      return facts?.path;
    default:
      return facts?.scheme;
  }
}

/** The value a label gives for a request; undefined when it has none (a missing header, an unknown address). */
function labelValue(
  label: LabelSource,
  headers: IncomingHttpHeaders,
  facts: LabelFacts | undefined,
): string | undefined {
  switch (label.kind) {
    case 'header':
      return isPseudoHeader(label.header)
        ? pseudoHeaderValue(label.header, headers, facts)
        : headerValue(headers, label.header);
    case 'literal':
      return label.value;
    case 'remote_address':
      return facts?.remoteAddress || undefined;
    case 'source_cluster':
      return facts?.sourceCluster;
    default:
      return facts?.destinationCluster;
  }
}

/**
 * The descriptors a request yields: one per group whose labels all have a
 * value (a group loses an `omit_if_not_present` entry whose header is
 * missing, and is dropped whole for any other label without a value, as
 * Envoy drops a descriptor an action cannot fill, or when nothing is left).
 */
export function buildDescriptors(
  plan: LabelPlan,
  headers: IncomingHttpHeaders,
  facts?: LabelFacts,
): RateLimitDescriptor[] {
  const descriptors: RateLimitDescriptor[] = [];
  groups: for (const group of plan.groups) {
    const entries: DescriptorEntry[] = [];
    for (const label of group) {
      const value = labelValue(label, headers, facts);
      if (value === undefined) {
        if (label.kind === 'header' && label.omit) continue;
        continue groups;
      }
      entries.push({ key: label.key, value });
    }
    if (entries.length > 0) descriptors.push({ entries });
  }
  return descriptors;
}
