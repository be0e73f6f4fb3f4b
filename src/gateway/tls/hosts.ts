/**
 * @module gateway/tls/hosts
 * The Hosts of a configuration as a request meets them. With no Host every
 * host is served, as without TLS. With Hosts, a request's host chooses one
 * as Envoy chooses a virtual host: the exact name, else the longest
 * `*.example.com` that covers it, else `*`; a host no Host covers is a 404.
 * The Host chosen decides what a request that came over cleartext gets
 * (its insecure action, when it has a certificate), and which Mappings can
 * take the request: those whose labels its `mappingSelector` matches (and
 * whose hostname, if any, can meet its own), or, without a selector, those
 * whose hostname can meet its own (Emissary's rule; a Mapping without a
 * hostname is `*`).
 */
import type { MappingRecord } from '../config/schema';
import type { HostRecord, InsecureAction } from '../config/tls';
import { hostMatches, hostSpecificity, parseHostPattern, type HostPattern } from '../match/host-match';

/** A Host as requests are held against it. */
export interface HostRoute<T = unknown> {
  readonly name: string;
  /** Its hostname, parsed; null for `*`. */
  readonly pattern: HostPattern | null;
  readonly hostname: string;
  /** Whether it is served with a certificate: only then does a cleartext request get its insecure action. */
  readonly secure: boolean;
  /** What a request that came over cleartext gets. */
  readonly insecure: InsecureAction;
  /** The routes it serves (the runtime's, of the Mappings it selects). */
  table: T;
}

/** The host of a glob without a port, in lower case: `*.example.com`, `api.*`, `*`. */
function bareGlob(glob: string): string {
  const lower = glob.toLowerCase();
  if (lower.startsWith('[')) return lower.slice(0, lower.indexOf(']') + 1);
  const colon = lower.lastIndexOf(':');
  return colon > 0 && /^[0-9]+$/.test(lower.slice(colon + 1)) ? lower.slice(0, colon) : lower;
}

/**
 * Whether some host name can match both globs (Emissary's
 * `hostglob_matches`): equal, either `*`, one's leading `*` covering the
 * other's end, one's trailing `*` covering the other's start, or a leading
 * and a trailing one (which always meet).
 */
export function globsMayMeet(first: string, second: string): boolean {
  const a = bareGlob(first);
  const b = bareGlob(second);
  if (a === b || a === '*' || b === '*') return true;
  const aStart = a.startsWith('*');
  const aEnd = a.endsWith('*');
  const bStart = b.startsWith('*');
  const bEnd = b.endsWith('*');
  if ((aStart && bEnd) || (bStart && aEnd)) return true;
  if (aStart && bStart) return a.length > b.length ? a.endsWith(b.slice(1)) : b.endsWith(a.slice(1));
  if (aEnd && bEnd) return a.length > b.length ? a.startsWith(b.slice(0, -1)) : b.startsWith(a.slice(0, -1));
  // One glob and one exact name: the `*` stands for at least one character.
  if (aStart) return b.length > a.length - 1 && b.endsWith(a.slice(1));
  if (bStart) return a.length > b.length - 1 && a.endsWith(b.slice(1));
  if (aEnd) return b.length > a.length - 1 && b.startsWith(a.slice(0, -1));
  if (bEnd) return a.length > b.length - 1 && a.startsWith(b.slice(0, -1));
  return false;
}

/** The host glob a Mapping is written for, `*` for any; undefined for a pattern (`host_regex`), which may meet any Host. */
function mappingGlob(mapping: MappingRecord): string | undefined {
  if (mapping.hostname !== undefined) return mapping.hostname;
  if (mapping.host !== undefined) return mapping.host_regex === true ? undefined : mapping.host;
  return '*';
}

/** Whether every label `selector` asks for is one of `labels`. */
function labelsMatch(
  selector: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  for (const [name, value] of Object.entries(selector)) if (labels?.[name] !== value) return false;
  return true;
}

/** Whether a Host serves a Mapping. */
export function hostSelects(host: HostRecord, mapping: MappingRecord): boolean {
  const glob = mappingGlob(mapping);
  const meets = glob === undefined || globsMayMeet(host.hostname, glob);
  const selector = host.mappingSelector;
  if (selector === undefined) return meets;
  if (!labelsMatch(selector.matchLabels ?? {}, mapping.metadata_labels)) return false;
  return mapping.hostname === undefined && mapping.host === undefined ? true : meets;
}

/** A Host as requests meet it; `table` is given once its Mappings' routes are known. */
export function hostRoute<T>(host: HostRecord, secure: boolean, table: T): HostRoute<T> {
  const parsed = parseHostPattern(host.hostname, true);
  const insecure = host.requestPolicy.insecure;
  return {
    name: host.name,
    pattern: typeof parsed === 'string' ? null : parsed,
    hostname: host.hostname,
    secure,
    insecure: insecure.additionalPort === -1 ? 'Reject' : insecure.action,
    table,
  };
}

/** The Host a request for `host` (its Host header, or the authority standing for it) goes to; undefined for none. */
export function chooseHost<T>(hosts: readonly HostRoute<T>[], host: string | undefined): HostRoute<T> | undefined {
  let best: HostRoute<T> | undefined;
  let bestRank = -1;
  for (let i = 0; i < hosts.length; i++) {
    const candidate = hosts[i];
    const pattern = candidate.pattern;
    if (pattern !== null && !hostMatches(pattern, host)) continue;
    const rank = hostSpecificity(pattern);
    if (rank > bestRank) {
      best = candidate;
      bestRank = rank;
    }
  }
  return best;
}
